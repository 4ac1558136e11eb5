package terraform

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

func TestFixtureLayerPlansItsResources(t *testing.T) {
	bin := terraformBin(t)
	dir := t.TempDir()
	layer := filepath.Join(dir, "tree", "layer")
	if err := WriteFixtureLayer(layer, 5, filepath.Join(dir, "state", "terraform.tfstate")); err != nil {
		t.Fatal(err)
	}
	r, err := Plan(testContext(t), PlanInput{Setup: Setup{WorkDir: layer, TerraformBin: bin}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Add != 5 || r.Changed[4] != "terraform_data.r4" {
		t.Errorf("fixture plan: %s, %v", r.Summary(), r.Changed)
	}
}

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
			if err := WriteFixtureLayer(layer, n, filepath.Join(dir, "terraform.tfstate")); err != nil {
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
