package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
)

// syncsEnv is a Strata server with acme/infra holding kustomize sources and
// a .strata.yaml with syncs.
type syncsEnv struct {
	*apptest.Env
	t *testing.T
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

// kustomizeRepo is a base with a configMapGenerator, a component and a dev
// overlay with an image override, a strategic-merge patch and a JSON patch.
func kustomizeRepo() map[string]string {
	return map[string]string{
		"deploy/base/kustomization.yaml": `resources:
- deployment.yaml
- service.yaml
configMapGenerator:
- name: app-config
  literals: [LOG_LEVEL=info]
`,
		"deploy/base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: ghcr.io/acme/api:v1
        envFrom:
        - configMapRef: {name: app-config}
      - name: sidecar
        image: busybox:1.36
`,
		"deploy/base/service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector: {app: api}
  ports:
  - port: 80
`,
		"deploy/components/monitoring/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
- monitor.yaml
`,
		"deploy/components/monitoring/monitor.yaml": `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
`,
		"deploy/overlays/dev/kustomization.yaml": `namespace: dev
resources:
- ../../base
- namespace.yaml
components:
- ../../components/monitoring
images:
- name: busybox
  newTag: "1.37"
patches:
- path: replicas.yaml
- target: {kind: Service, name: api}
  patch: |-
    - op: replace
      path: /spec/ports/0/port
      value: 8080
`,
		"deploy/overlays/dev/replicas.yaml": replicas(3),
		"deploy/overlays/dev/namespace.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: dev
`,
		"docs/README.md": "not an input\n",
	}
}

func replicas(n int) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: " + strconv.Itoa(n) + "\n"
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
	return &syncsEnv{Env: env, t: t}
}

// push commits files on main and delivers the push; it returns the commit.
func (e *syncsEnv) push(files map[string]string, message string) string {
	e.t.Helper()
	before := e.Repo.Branch("main")
	after := e.Repo.Commit("main", files, message)
	e.Deliver(e.Repo.PushEvent("main", before, after))
	return after
}

// completed waits for the latest check called name on sha to complete.
func (e *syncsEnv) completed(sha, name string) githubtest.CheckRun {
	e.t.Helper()
	var cr githubtest.CheckRun
	e.GitHub.WaitFor(e.t, syncsWait, func() bool {
		var ok bool
		cr, ok = e.Repo.CheckRun(sha, name)
		return ok && cr.Status == "completed"
	})
	return cr
}

// commentWith waits for a comment on the PR containing text.
func (e *syncsEnv) commentWith(pr int, text string) githubtest.Comment {
	e.t.Helper()
	var found githubtest.Comment
	e.GitHub.WaitFor(e.t, syncsWait, func() bool {
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

func (e *syncsEnv) comment(pr int, user, body string) {
	e.t.Helper()
	e.Deliver(e.Repo.IssueCommentEvent(pr, user, body))
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
