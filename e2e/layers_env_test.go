package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform/terraformtest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/tooltest"
)

// layersEnv is a Strata server with acme/infra holding Terraform layers whose
// state lives in the test's temp dir, so it outlives every work dir.
type layersEnv struct {
	scenario
	state string // directory of the layers' states
}

const layersWait = 90 * time.Second

// requireTerraform skips without the Terraform binary, or without the
// Landlock that Strata sandboxes it with, unless tools are required.
func requireTerraform(t *testing.T) {
	t.Helper()
	bin := apptest.TerraformBin(t)
	if _, err := os.Stat(bin); err != nil {
		tooltest.Missing(t, "terraform at "+bin, err)
	}
	if err := sandbox.Detect(sandbox.Settings{}).Err(); err != nil {
		tooltest.Missing(t, "Landlock", err)
	}
}

// startLayers starts Strata with the default branch holding the given
// layers (dir -> number of terraform_data resources).
func startLayers(t *testing.T, opts apptest.Options, layers map[string]int, extra map[string]string) *layersEnv {
	t.Helper()
	requireTerraform(t)
	e := (&layersEnv{state: t.TempDir()}).another(t, opts)
	files := map[string]string{}
	for dir, n := range layers {
		files[dir+"/main.tf"] = e.layerFile(dir, n)
	}
	for p, c := range extra {
		files[p] = c
	}
	e.Repo.Commit("main", files, "Add layers")
	return e
}

// another starts a Strata server on the layers of e (a restart, a replica):
// Terraform's sandbox opens their state dir to it, as an operator lists a
// local backend's directory in terraform.sandbox_paths.
func (e *layersEnv) another(t *testing.T, opts apptest.Options) *layersEnv {
	t.Helper()
	configure := opts.Configure
	opts.Configure = func(c *config.Server) {
		c.Terraform.SandboxPaths.ReadWrite = append(c.Terraform.SandboxPaths.ReadWrite, e.state)
		if configure != nil {
			configure(c)
		}
	}
	return &layersEnv{scenario: scenario{Env: apptest.Start(t, opts), t: t, wait: layersWait}, state: e.state}
}

// layerFile is a layer of n terraform_data resources with its state in the
// env's state dir.
func (e *layersEnv) layerFile(dir string, n int) string {
	e.t.Helper()
	tmp := e.t.TempDir()
	state := filepath.Join(e.state, strings.ReplaceAll(dir, "/", "_"), "terraform.tfstate")
	if err := terraformtest.WriteFixtureLayer(tmp, n, state); err != nil {
		e.t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(tmp, "main.tf"))
	if err != nil {
		e.t.Fatal(err)
	}
	return string(b)
}

// openPR opens a PR by author from a branch changing the files.
func (e *layersEnv) openPR(branch, author string, files map[string]string) *githubtest.PR {
	e.Repo.Commit(branch, files, "Change "+branch)
	return e.Repo.OpenPR(branch, "main", author)
}

func (e *layersEnv) checksNamed(sha, name string) []githubtest.CheckRun {
	var out []githubtest.CheckRun
	for _, cr := range e.Repo.CheckRuns(sha) {
		if cr.Name == name {
			out = append(out, cr)
		}
	}
	return out
}

func actionIDs(cr githubtest.CheckRun) []string {
	var ids []string
	for _, a := range cr.Actions {
		ids = append(ids, a.Identifier)
	}
	return ids
}
