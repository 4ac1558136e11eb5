package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/hydrate/hydratetest"
)

// syncsEnv is a Strata server with acme/infra holding kustomize sources and
// a .strata.yaml with syncs.
type syncsEnv struct {
	scenario
}

const syncsWait = 60 * time.Second

// syncsConfig has one sync, dev, hydrated into hydrated:dev.
const syncsConfig = `version: 1
syncs:
  - name: dev
    source: deploy/overlays/dev
    dest: {branch: hydrated, path: dev}
    takeover: {default: 2h, max: 12h}
`

// kustomizeRepo is hydratetest's app repository (a base, a component and a
// dev overlay) plus a file no kustomization reads.
func kustomizeRepo() map[string]string {
	files := hydratetest.AppRepo()
	files["docs/README.md"] = "not an input\n"
	return files
}

// startSyncs starts Strata with the default branch holding files (the
// kustomize fixture and syncsConfig when nil), not yet pushed.
func startSyncs(t *testing.T, opts apptest.Options, files map[string]string) *syncsEnv {
	t.Helper()
	env := apptest.Start(t, opts)
	if files == nil {
		files = kustomizeRepo()
		files[".strata.yaml"] = syncsConfig
	}
	env.Repo.Commit("main", files, "Add manifests")
	return &syncsEnv{scenario{Env: env, t: t, wait: syncsWait}}
}

// push commits files on main and delivers the push; it returns the commit.
func (e *syncsEnv) push(files map[string]string, message string) string {
	e.t.Helper()
	before := e.Repo.Branch("main")
	after := e.Repo.Commit("main", files, message)
	e.Deliver(e.Repo.PushEvent("main", before, after))
	return after
}

// hydrated is the files under dest on the hydrated branch.
func (e *syncsEnv) hydrated(dir string) map[string]string {
	out := map[string]string{}
	for p, c := range e.Repo.Tree("hydrated") {
		if rest, ok := strings.CutPrefix(p, dir+"/"); ok {
			out[rest] = c
		}
	}
	return out
}

// gitCommit reads a commit of acme/infra through the fake's Git Data API.
func (e *syncsEnv) gitCommit(sha string) *github.Commit {
	e.t.Helper()
	gh, err := github.NewClient(nil).WithAuthToken(e.GitHub.Token()).WithEnterpriseURLs(e.GitHub.APIURL(), e.GitHub.APIURL())
	if err != nil {
		e.t.Fatal(err)
	}
	c, _, err := gh.Git.GetCommit(context.Background(), "acme", "infra", sha)
	if err != nil {
		e.t.Fatal(err)
	}
	return c
}

// parent is the first parent of a commit, "" for a root commit.
func (e *syncsEnv) parent(sha string) string {
	c := e.gitCommit(sha)
	if len(c.Parents) == 0 {
		return ""
	}
	return c.Parents[0].GetSHA()
}
