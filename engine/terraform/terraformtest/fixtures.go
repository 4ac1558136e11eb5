// Package terraformtest holds the Terraform layers that tests and benchmarks
// write for themselves: n `terraform_data` resources (no provider download)
// with the local backend keeping state outside the work dir. It imports
// nothing of Strata, so the engine's own tests use it as the end-to-end
// scenarios and benchmarks do, and the engine ships no test code.
package terraformtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteFixtureLayer writes a layer of n `terraform_data` resources
// (`terraform_data.r0` ... ) to dir, creating it, with the local backend
// keeping its state at statePath (absolute, so that state outlives the
// work dir of one run, as a real backend would). It needs no provider
// download. Tests and benchmarks share it.
func WriteFixtureLayer(dir string, n int, statePath string) error {
	if !filepath.IsAbs(statePath) {
		return fmt.Errorf("fixture: state path %q is not absolute", statePath)
	}
	var b strings.Builder
	b.WriteString(BackendBlock(statePath))
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "\nresource \"terraform_data\" \"r%d\" {\n  input = \"value-%d\"\n}\n", i, i)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "main.tf"), []byte(b.String()), 0o644)
}

// BackendBlock is a `terraform` block with the local backend at statePath;
// the states of other workspaces go next to it, not into the work dir.
func BackendBlock(statePath string) string {
	workspaces := filepath.Join(filepath.Dir(statePath), "terraform.tfstate.d")
	return fmt.Sprintf("terraform {\n  backend \"local\" {\n    path          = %q\n    workspace_dir = %q\n  }\n}\n", statePath, workspaces)
}
