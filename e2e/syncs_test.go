package e2e

import (
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/hydrate/hydratetest"
)

const devHydrate = "strata/hydrate: dev"

// The first push hydrates dev in one commit on a new branch: one file per
// resource plus .strata-sync.yaml, annotated with the source commit; the
// check links the commit and counts resources and files.
func TestSyncsHydrateOnPush(t *testing.T) {
	e := startSyncs(t, apptest.Options{}, nil)
	sha := e.push(map[string]string{"docs/README.md": "first\n"}, "First push")

	cr := e.completed(sha, devHydrate)
	if cr.Conclusion != "success" || !strings.Contains(cr.Title, "5 resources") {
		t.Fatalf("hydrate check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	first := e.Repo.Branch("hydrated")
	if first == "" || !strings.Contains(cr.Summary, "/commit/"+first) {
		t.Fatalf("check does not link the hydrated commit %s:\n%s", first, cr.Summary)
	}
	// The run's log, which the web UI shows, says what the check says.
	e.WaitIdle(30 * time.Second)
	if logs := runLogs(t, e.Server.Store(), "sync_hydrate", e.Repo.FullName()); len(logs) == 0 ||
		!strings.Contains(logs[0], "[strata] kustomize build") || !strings.Contains(logs[0], "success: "+cr.Title) {
		t.Errorf("hydration run logs = %q, want the build and the check's title", logs)
	}
	files := e.hydrated("dev")
	for _, name := range []string{"deployment_dev_api.yaml", "service_dev_api.yaml", "namespace_dev.yaml", "servicemonitor_dev_api.yaml", hydrate.SyncStateFile} {
		if _, ok := files[name]; !ok {
			t.Errorf("hydrated files lack %s: %v", name, keys(files))
		}
	}
	dep := files["deployment_dev_api.yaml"]
	for _, want := range []string{"replicas: 3", "busybox:1.37", "strata.dev/source-commit: '" + sha + "'", "app-config-"} {
		if !strings.Contains(dep, want) {
			t.Errorf("deployment lacks %q:\n%s", want, dep)
		}
	}
	if svc := files["service_dev_api.yaml"]; !strings.Contains(svc, "port: 8080") {
		t.Errorf("service not patched:\n%s", svc)
	}
	if st := files[hydrate.SyncStateFile]; !strings.Contains(st, "sourceCommit: "+sha) || !strings.Contains(st, "acme/infra") {
		t.Errorf("sync state = %s", st)
	}

	// A push that changes no input: no check, no commit.
	other := e.push(map[string]string{"docs/README.md": "second\n"}, "Docs")
	// A push that changes an input and removes a resource: one commit, pruned.
	kust := strings.Replace(kustomizeRepo()["deploy/overlays/dev/kustomization.yaml"], "- namespace.yaml\n", "", 1)
	third := e.push(map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(5), "deploy/overlays/dev/kustomization.yaml": kust}, "Scale")
	cr = e.completed(third, devHydrate)
	if cr.Conclusion != "success" {
		t.Fatalf("second hydration = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if _, ok := e.Repo.CheckRun(other, devHydrate); ok {
		t.Error("a push that changed no input of dev was hydrated")
	}
	files = e.hydrated("dev")
	if _, ok := files["namespace_dev.yaml"]; ok {
		t.Error("the removed namespace was not pruned")
	}
	if !strings.Contains(files["deployment_dev_api.yaml"], "replicas: 5") {
		t.Errorf("deployment not rehydrated:\n%s", files["deployment_dev_api.yaml"])
	}
	second := e.Repo.Branch("hydrated")
	if commits := commitsBetween(e, first, second); commits != 1 {
		t.Errorf("%d commits on hydrated for one hydration, want 1", commits)
	}
	if !strings.Contains(cr.Summary, "delete `dev/namespace_dev.yaml`") {
		t.Errorf("check does not list the deletion:\n%s", cr.Summary)
	}
	noViolations(t, e.GitHub)
}

// A kustomization that does not build -> the check fails with kustomize's
// message, and the destination is left as it was. The push that fixes it
// hydrates, though the file it adds was no input of the last good hydration.
func TestSyncsBuildFailure(t *testing.T) {
	e := startSyncs(t, apptest.Options{}, nil)
	good := e.push(map[string]string{"docs/README.md": "x\n"}, "First")
	e.completed(good, devHydrate)
	before := e.Repo.Branch("hydrated")

	kust := strings.Replace(kustomizeRepo()["deploy/overlays/dev/kustomization.yaml"], "- namespace.yaml\n", "- namespace.yaml\n- extra.yaml\n", 1)
	broken := e.push(map[string]string{"deploy/overlays/dev/kustomization.yaml": kust}, "Break")
	cr := e.completed(broken, devHydrate)
	if cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "extra.yaml") || cr.Title != "kustomize build failed" {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if after := e.Repo.Branch("hydrated"); after != before {
		t.Errorf("a failed build moved the destination: %s -> %s", before, after)
	}

	fixed := e.push(map[string]string{"deploy/overlays/dev/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n"}, "Fix")
	if cr := e.completed(fixed, devHydrate); cr.Conclusion != "success" {
		t.Fatalf("fixed = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if _, ok := e.hydrated("dev")["configmap_dev_extra.yaml"]; !ok {
		t.Errorf("the fix was not hydrated: %v", keys(e.hydrated("dev")))
	}
	noViolations(t, e.GitHub)
}

// A source that leaves the repository, or a dest that overlaps another
// sync's, is refused with a clear error; nothing is hydrated.
func TestSyncsBadConfigChangesNothing(t *testing.T) {
	files := kustomizeRepo()
	files[".strata.yaml"] = `version: 1
syncs:
  - name: dev
    source: ../outside
    dest: {branch: hydrated, path: dev}
  - name: prod
    source: deploy/overlays/dev
    dest: {branch: hydrated, path: dev/prod}
`
	e := startSyncs(t, apptest.Options{}, files)
	sha := e.push(map[string]string{"docs/README.md": "x\n"}, "Push")
	dev := e.completed(sha, devHydrate)
	prod := e.completed(sha, "strata/hydrate: prod")
	for _, cr := range []struct{ name, summary, conclusion string }{{"dev", dev.Summary, dev.Conclusion}, {"prod", prod.Summary, prod.Conclusion}} {
		if cr.conclusion != "failure" || !strings.Contains(cr.summary, "../outside") || !strings.Contains(cr.summary, "overlaps") {
			t.Errorf("%s check = %s\n%s", cr.name, cr.conclusion, cr.summary)
		}
	}
	if b := e.Repo.Branch("hydrated"); b != "" {
		t.Errorf("the destination branch was created: %s", b)
	}
	noViolations(t, e.GitHub)
}

// An older push delivered after a newer one never replaces the newer
// hydration.
func TestSyncsOlderNeverOverwritesNewer(t *testing.T) {
	e := startSyncs(t, apptest.Options{}, nil)
	base := e.Repo.Branch("main")
	older := e.Repo.Commit("main", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(4)}, "Four")
	newer := e.Repo.Commit("main", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(6)}, "Six")
	e.Deliver(e.Repo.PushEvent("main", older, newer))
	if cr := e.completed(newer, devHydrate); cr.Conclusion != "success" {
		t.Fatalf("newer = %s %q", cr.Conclusion, cr.Summary)
	}
	tip := e.Repo.Branch("hydrated")
	e.Deliver(e.Repo.PushEvent("main", base, older))
	cr := e.completed(older, devHydrate)
	if cr.Conclusion != "neutral" || !strings.Contains(cr.Summary, "newer source commit "+newer[:7]) {
		t.Fatalf("older = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if e.Repo.Branch("hydrated") != tip || !strings.Contains(e.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 6") {
		t.Error("the older commit replaced the newer hydration")
	}
	noViolations(t, e.GitHub)
}

// A PR that changes dev's inputs gets the hydrated diff on its head, and
// nothing is committed.
func TestSyncsPreviewOnPR(t *testing.T) {
	e := startSyncs(t, apptest.Options{}, nil)
	sha := e.push(map[string]string{"docs/README.md": "x\n"}, "First")
	e.completed(sha, devHydrate)
	tip := e.Repo.Branch("hydrated")

	e.Repo.Commit("scale", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(7)}, "Scale")
	pr := e.Repo.OpenPR("scale", "main", "alice")
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	cr := e.completed(pr.HeadSHA(), devHydrate)
	if cr.Conclusion != "success" || cr.Title != "1 file would change" || cr.ExternalID != "pr:1" {
		t.Fatalf("preview = %s %q %q\n%s", cr.Conclusion, cr.Title, cr.ExternalID, cr.Summary)
	}
	if !strings.Contains(cr.Text, "-  replicas: 3") || !strings.Contains(cr.Text, "+  replicas: 7") || strings.Contains(cr.Text, "-    strata.dev/source-commit") {
		t.Errorf("preview diff:\n%s", cr.Text)
	}
	if e.Repo.Branch("hydrated") != tip {
		t.Error("a preview committed")
	}

	// A diff over GitHub's limit is cut, with a note, and the fence closed.
	big := strings.Replace(kustomizeRepo()["deploy/base/kustomization.yaml"], "[LOG_LEVEL=info]",
		"[LOG_LEVEL=info, BLOB="+strings.Repeat("x", 70000)+"]", 1)
	e.Repo.Commit("big", map[string]string{"deploy/base/kustomization.yaml": big}, "Big")
	bigPR := e.Repo.OpenPR("big", "main", "alice")
	e.Deliver(e.Repo.PullRequestEvent("opened", bigPR.Number))
	cr = e.completed(bigPR.HeadSHA(), devHydrate)
	if cr.Conclusion != "success" || len(cr.Text) > 65535 || !strings.Contains(cr.Text, "diff cut at GitHub's size limit") ||
		!strings.HasSuffix(cr.Text, "```\n") {
		t.Errorf("big preview = %s %q, %d bytes, ends %q", cr.Conclusion, cr.Title, len(cr.Text), cr.Text[max(0, len(cr.Text)-80):])
	}

	// A PR that touches no input gets no preview.
	e.Repo.Commit("docs", map[string]string{"docs/README.md": "y\n"}, "Docs")
	docs := e.Repo.OpenPR("docs", "main", "alice")
	e.Deliver(e.Repo.PullRequestEvent("opened", docs.Number))
	e.Deliver(e.Repo.IssueCommentEvent(docs.Number, "alice", "/help"))
	e.commentWith(docs.Number, "Strata commands")
	if _, ok := e.Repo.CheckRun(docs.HeadSHA(), devHydrate); ok {
		t.Error("a PR touching no input of dev got a preview")
	}
	noViolations(t, e.GitHub)
}

func keys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// commitsBetween counts the first-parent commits from old (exclusive) to new.
func commitsBetween(e *syncsEnv, old, new string) int {
	n := 0
	for sha := new; sha != "" && sha != old && n < 100; n++ {
		sha = e.parent(sha)
	}
	return n
}

// A sync that writes into its own source on the default branch is refused:
// each hydration would change its inputs.
func TestSyncsDestOverlappingSourceRefused(t *testing.T) {
	files := kustomizeRepo()
	files[".strata.yaml"] = `version: 1
syncs:
  - name: dev
    source: deploy/overlays/dev
    dest: {branch: main, path: deploy}
`
	e := startSyncs(t, apptest.Options{}, files)
	before := e.Repo.Branch("main")
	sha := e.push(map[string]string{"docs/README.md": "x\n"}, "Push")
	cr := e.completed(sha, devHydrate)
	if cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "overlaps its source") {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if main := e.Repo.Branch("main"); main != sha || e.parent(sha) != before {
		t.Errorf("main moved: %s", main)
	}
	noViolations(t, e.GitHub)
}
