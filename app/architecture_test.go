package app

import (
	"os/exec"
	"strings"
	"testing"
)

// The direction of imports is the architecture (docs/architecture.md):
// the engine never imports GitHub, handlers only decide and enqueue, the
// runtime knows no capability, and capabilities do not reach into each
// other. go list reads the real import graph.
func TestImportDirection(t *testing.T) {
	for _, tc := range []struct {
		pkgs      string
		forbidden []string
		why       string
	}{
		{"./engine/...", []string{"github.com/google/go-github", "github.com/palantir/go-githubapp", "github.com/shurcooL/githubv4",
			"strata.dev/strata/report", "strata.dev/strata/pull", "strata.dev/strata/worker"}, "the engine never imports GitHub"},
		{"./handlers", []string{"strata.dev/strata/report", "strata.dev/strata/pull", "strata.dev/strata/worker",
			"strata.dev/strata/engine/", "strata.dev/strata/source", "os/exec"},
			"handlers run no tool and call no GitHub API"},
		{"./worker", []string{"strata.dev/strata/layers", "strata.dev/strata/syncs", "strata.dev/strata/releases"},
			"the runtime knows no capability: app wires them"},
		{"./layers", []string{"strata.dev/strata/syncs", "strata.dev/strata/releases"}, "capabilities are independent"},
		{"./syncs", []string{"strata.dev/strata/layers", "strata.dev/strata/releases"}, "capabilities are independent"},
		{"./releases", []string{"strata.dev/strata/layers", "strata.dev/strata/syncs"}, "capabilities are independent"},
		{"./web", []string{"strata.dev/strata/layers", "strata.dev/strata/syncs", "strata.dev/strata/releases",
			"strata.dev/strata/handlers"},
			"the web UI shows the store and acts through the PR's commands: it knows no capability"},
		{"./setup", []string{"strata.dev/strata/layers", "strata.dev/strata/syncs", "strata.dev/strata/releases",
			"strata.dev/strata/handlers"},
			"the setup pages come before the App: they register it and know no capability"},
		{"./access", []string{"strata.dev/strata/report", "strata.dev/strata/worker", "strata.dev/strata/store"},
			"the permission table is a pure function of facts"},
	} {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", "../"+strings.TrimPrefix(tc.pkgs, "./")).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", tc.pkgs, err, out)
		}
		for _, dep := range strings.Fields(string(out)) {
			for _, f := range tc.forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s imports %s: %s", tc.pkgs, dep, tc.why)
				}
			}
		}
	}
}
