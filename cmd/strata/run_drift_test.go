package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/engine/terraform/terraformtest"
	"strata.dev/strata/tooltest"
)

// strata run drift on a checkout: the layer whose state matches its code
// is clean, the one whose resources are gone from the state drifted (exit
// status 2, its changed addresses listed); a layer without drift
// detection is not planned unless named.
func TestRunDrift(t *testing.T) {
	bin := apptest.TerraformBin(t)
	if _, err := os.Stat(bin); err != nil {
		tooltest.Missing(t, "terraform at "+bin, err)
	}
	t.Setenv(terraform.BinaryEnv, bin)
	t.Setenv("TF_CLI_CONFIG_FILE", "/dev/null")
	root, states := t.TempDir(), t.TempDir()
	layer := func(dir string, n int) {
		if err := terraformtest.WriteFixtureLayer(filepath.Join(root, dir), n, filepath.Join(states, dir+".tfstate")); err != nil {
			t.Fatal(err)
		}
	}
	layer("clean", 0)
	layer("drifted", 2)
	layer("quiet", 1)
	cfg := "version: 1\ndrift: {schedule: \"every 6h\"}\nlayers:\n  - dir: clean\n  - dir: drifted\n  - dir: quiet\n    drift: {enabled: false}\n"
	if err := os.WriteFile(filepath.Join(root, ".strata.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	var out bytes.Buffer
	err := runDrift(context.Background(), &out, output{format: formatText}, root, nil)
	var exit *exitError
	if !errors.As(err, &exit) || exit.code != exitDrifted || exit.msg != "1 of 2 layers drifted" {
		t.Fatalf("runDrift = %v, want exit status %d\n%s", err, exitDrifted, out.String())
	}
	want := "clean: clean\ndrifted: drifted: 2 to add, 0 to change, 0 to destroy\n  terraform_data.r0\n  terraform_data.r1\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}

	out.Reset()
	if err := runDrift(context.Background(), &out, output{format: formatText}, root, []string{"clean"}); err != nil || out.String() != "clean: clean\n" {
		t.Errorf("named clean layer: %v\n%s", err, out.String())
	}
	if err := runDrift(context.Background(), &out, output{format: formatText}, root, []string{"nope"}); err == nil || !strings.Contains(err.Error(), `no layer "nope"`) {
		t.Errorf("unknown layer: %v", err)
	}
}
