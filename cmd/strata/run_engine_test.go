package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/engine/terraform/terraformtest"
	"strata.dev/strata/tooltest"
)

// strata run apply on a checkout whose layers name both engines: each
// layer's state is written by its own engine.
func TestRunLayersByEngine(t *testing.T) {
	tf := apptest.TerraformBin(t)
	if _, err := os.Stat(tf); err != nil {
		tooltest.Missing(t, "terraform at "+tf, err)
	}
	tofu, err := terraform.FindTofu()
	if err == nil {
		_, err = os.Stat(tofu)
	}
	if err != nil {
		tooltest.Missing(t, "tofu ($"+terraform.TofuBinaryEnv+" or PATH)", err)
	}
	t.Setenv(terraform.BinaryEnv, tf)
	t.Setenv("TF_CLI_CONFIG_FILE", "/dev/null")
	root, states := t.TempDir(), t.TempDir()
	for _, dir := range []string{"old", "new"} {
		if err := terraformtest.WriteFixtureLayer(filepath.Join(root, dir), 1, filepath.Join(states, dir+".tfstate")); err != nil {
			t.Fatal(err)
		}
	}
	cfg := "version: 1\nengine: tofu\nlayers:\n  - dir: old\n    engine: terraform\n  - dir: new\n"
	if err := os.WriteFile(filepath.Join(root, ".strata.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := &cobra.Command{}
	var out bytes.Buffer
	cmd.SetOut(&out)
	if _, err := runLayers(cmd, layersRun{repoDir: root, apply: true, yes: true}); err != nil {
		t.Fatalf("runLayers: %v\n%s", err, out.String())
	}
	for dir, bin := range map[string]string{"old": tf, "new": tofu} {
		want := versionOf(t, bin)
		var state struct {
			Version string `json:"terraform_version"`
		}
		b, err := os.ReadFile(filepath.Join(states, dir+".tfstate"))
		if err == nil {
			err = json.Unmarshal(b, &state)
		}
		if err != nil || state.Version != want {
			t.Errorf("layer %s: state written by %q (%v), want %s (%s)", dir, state.Version, err, want, bin)
		}
	}
}

// versionOf asks a binary its version.
func versionOf(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version", "-json").Output()
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err == nil {
		err = json.Unmarshal(out, &v)
	}
	if err != nil {
		t.Fatalf("%s version -json: %v", bin, err)
	}
	return v.Version
}
