package terraformtest_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/engine/terraform/terraformtest"
	"strata.dev/strata/tooltest"
)

func TestFixtureLayerPlansItsResources(t *testing.T) {
	bin, err := terraform.FindBinary()
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		tooltest.Missing(t, "terraform ($"+terraform.BinaryEnv+" or PATH)", err)
	}
	dir := t.TempDir()
	layer := filepath.Join(dir, "tree", "layer")
	if err := terraformtest.WriteFixtureLayer(layer, 5, filepath.Join(dir, "state", "terraform.tfstate")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	r, err := terraform.Plan(ctx, terraform.PlanInput{Setup: terraform.Setup{WorkDir: layer, TerraformBin: bin}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Add != 5 || r.Changed[4] != "terraform_data.r4" {
		t.Errorf("fixture plan: %s, %v", r.Summary(), r.Changed)
	}
}

func TestFixtureLayerRefusesARelativeStatePath(t *testing.T) {
	err := terraformtest.WriteFixtureLayer(t.TempDir(), 1, "terraform.tfstate")
	if err == nil {
		t.Fatal("a relative state path was accepted: the state would live in the work dir of one run")
	}
}
