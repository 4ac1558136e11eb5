package terraform

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"strata.dev/strata/engine/terraform/terraformtest"
)

// BenchmarkPlan measures Plan (init, plan, show) on fixture layers; compare
// with `terraform init && terraform plan` run by hand on the same directory.
func BenchmarkPlan(b *testing.B) {
	bin, err := FindBinary()
	if err != nil {
		b.Skip("no terraform binary")
	}
	for _, n := range []int{200, 2000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			dir := b.TempDir()
			layer := filepath.Join(dir, "layer")
			if err := terraformtest.WriteFixtureLayer(layer, n, filepath.Join(dir, "terraform.tfstate")); err != nil {
				b.Fatal(err)
			}
			in := PlanInput{Setup: Setup{WorkDir: layer, TerraformBin: bin, PluginCacheDir: filepath.Join(dir, "cache")}}
			for b.Loop() {
				if _, err := Plan(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
