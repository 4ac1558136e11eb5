package e2e

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
)

// layersEnv is a Strata server with acme/infra holding Terraform layers whose
// state lives in the test's temp dir, so it outlives every work dir.
type layersEnv struct {
	*apptest.Env
	t     *testing.T
	state string // directory of the layers' states
}

const layersWait = 90 * time.Second

// requireTerraform skips without the Terraform binary, unless tools are required.
func requireTerraform(t *testing.T) {
	t.Helper()
	bin := apptest.TerraformBin(t)
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("STRATA_REQUIRE_TOOLS") == "1" {
			t.Fatalf("terraform at %s is required (STRATA_REQUIRE_TOOLS=1): %v", bin, err)
		}
		t.Skipf("no terraform at %s", bin)
	}
}

// startLayers starts Strata with the default branch holding the given
// layers (dir -> number of terraform_data resources).
func startLayers(t *testing.T, opts apptest.Options, layers map[string]int, extra map[string]string) *layersEnv {
	t.Helper()
	requireTerraform(t)
	env := apptest.Start(t, opts)
	e := &layersEnv{Env: env, t: t, state: t.TempDir()}
	files := map[string]string{}
	for dir, n := range layers {
		files[dir+"/main.tf"] = e.layerFile(dir, n)
	}
	for p, c := range extra {
		files[p] = c
	}
	env.Repo.Commit("main", files, "Add layers")
	return e
}

// layerFile is a layer of n terraform_data resources with its state in the
// env's state dir.
func (e *layersEnv) layerFile(dir string, n int) string {
	e.t.Helper()
	tmp := e.t.TempDir()
	state := filepath.Join(e.state, strings.ReplaceAll(dir, "/", "_"), "terraform.tfstate")
	if err := terraform.WriteFixtureLayer(tmp, n, state); err != nil {
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

// comment posts a comment on the PR as user and delivers it.
func (e *layersEnv) comment(pr int, user, body string) {
	e.t.Helper()
	e.Deliver(e.Repo.IssueCommentEvent(pr, user, body))
}

// completed waits for the latest check called name on sha to complete.
func (e *layersEnv) completed(sha, name string) githubtest.CheckRun {
	e.t.Helper()
	var cr githubtest.CheckRun
	e.WaitFor(layersWait, func() bool {
		var ok bool
		cr, ok = e.Repo.CheckRun(sha, name)
		return ok && cr.Status == "completed"
	})
	return cr
}

// commentWith waits for a comment on the PR containing text.
func (e *layersEnv) commentWith(pr int, text string) githubtest.Comment {
	e.t.Helper()
	var found githubtest.Comment
	e.WaitFor(layersWait, func() bool {
		for _, c := range e.Repo.Comments(pr) {
			if strings.Contains(c.Body, text) {
				found = c
				return true
			}
		}
		return false
	})
	return found
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

func noViolations(t *testing.T, gh *githubtest.Server) {
	t.Helper()
	for _, v := range gh.Violations() {
		t.Errorf("request GitHub would refuse: %s %s: %s", v.Method, v.Path, v.Err)
	}
}

// layerSlotSpans reads, from the plan runs' logs, when each held its
// layer's slot: [taken, released] in Unix milliseconds.
func layerSlotSpans(t *testing.T, st *store.Store, repo string) [][2]int64 {
	t.Helper()
	rows, err := st.DB().Query(st.Rebind(`SELECT log FROM runs WHERE kind = 'layer_plan' AND repo = ? ORDER BY id`), repo)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var spans [][2]int64
	for rows.Next() {
		var log string
		if err := rows.Scan(&log); err != nil {
			t.Fatal(err)
		}
		var span [2]int64
		for _, line := range strings.Split(log, "\n") {
			if v, ok := strings.CutPrefix(line, "[strata] layer slot taken at "); ok {
				span[0], _ = strconv.ParseInt(v, 10, 64)
			}
			if v, ok := strings.CutPrefix(line, "[strata] layer slot released at "); ok {
				span[1], _ = strconv.ParseInt(v, 10, 64)
			}
		}
		if span[0] != 0 {
			spans = append(spans, span)
		}
	}
	return spans
}
