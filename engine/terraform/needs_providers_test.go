package terraform

import (
	"os"
	"path/filepath"
	"testing"

	"strata.dev/strata/engine/terraform/terraformtest"
)

// Only a layer that may install providers waits for the plugin cache lock.
func TestNeedsProviders(t *testing.T) {
	for name, tc := range map[string]struct {
		src  string
		want bool
	}{
		"built-in only":  {`resource "terraform_data" "a" {}` + "\n" + `data "terraform_remote_state" "b" {` + "\n" + `  backend = "local"` + "\n}\n", false},
		"other provider": {`resource "null_resource" "a" {}`, true},
		"required":       {"terraform {\n  required_providers {\n    aws = { source = \"hashicorp/aws\" }\n  }\n}\n", true},
		"module call":    {"module \"m\" {\n  source = \"./m\"\n}\n", true},
		"provider block": {"provider \"google\" {}\n", true},
		"does not parse": {`resource "terraform_data" {`, true},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(tc.src), 0o644); err != nil {
				t.Fatal(err)
			}
			if got := needsProviders(dir); got != tc.want {
				t.Errorf("needsProviders = %v, want %v", got, tc.want)
			}
		})
	}
}

func BenchmarkNeedsProviders(b *testing.B) {
	dir := b.TempDir()
	if err := terraformtest.WriteFixtureLayer(dir, 2000, filepath.Join(dir, "state")); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < b.N; i++ {
		needsProviders(dir)
	}
}
