package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
)

// discoveryConfig keeps dev in syncs: and discovers the Sync files labelled
// env: dev anywhere in the repository.
const discoveryConfig = `version: 1
sync_discovery:
  globs: ["**/strata-sync.yaml"]
  selector:
    matchLabels: {env: dev}
    matchExpressions: [{key: team, operator: NotIn, values: [legacy]}]
syncs:
  - name: dev
    source: deploy/overlays/dev
    dest: {branch: hydrated, path: dev}
`

// syncFile is a Sync file; its source is relative to its own directory.
func syncFile(name, labels, source, destPath string) string {
	return "apiVersion: strata.dev/v1\nkind: Sync\nmetadata:\n  name: " + name + "\n  labels: {" + labels + "}\n" +
		"spec:\n  source: " + source + "\n  dest: {branch: hydrated, path: " + destPath + "}\n"
}

func startDiscovery(t *testing.T) *syncsEnv {
	files := kustomizeRepo()
	files[".strata.yaml"] = discoveryConfig
	files["deploy/base/strata-sync.yaml"] = syncFile("base", "env: dev, team: api", ".", "base")
	files["envs/prod/strata-sync.yaml"] = syncFile("prod", "env: prod", "../../deploy/base", "prod")
	files["envs/old/strata-sync.yaml"] = syncFile("old", "env: dev, team: legacy", "../../deploy/base", "old")
	return startSyncs(t, apptest.Options{}, files)
}

// The selector keeps deploy/base's Sync file (env: dev) and leaves out
// prod's (env: prod) and old's (team: legacy): a push hydrates base beside
// dev, nothing of prod or old; /help lists each with its file.
func TestHydrateDiscoverySelector(t *testing.T) {
	e := startDiscovery(t)
	sha := e.push(map[string]string{"docs/README.md": "x\n"}, "Push")
	if cr := e.completed(sha, "strata/hydrate: base"); cr.Conclusion != "success" || !strings.Contains(cr.Title, "resources") {
		t.Fatalf("base = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if cr := e.completed(sha, devHydrate); cr.Conclusion != "success" {
		t.Fatalf("dev = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	e.WaitIdle(syncsWait)
	for _, name := range []string{"prod", "old"} {
		if _, ok := e.Repo.CheckRun(sha, "strata/hydrate: "+name); ok {
			t.Errorf("%s, which the selector leaves out, has a check", name)
		}
	}
	if _, ok := e.hydrated("base")["deployment_api.yaml"]; !ok {
		t.Errorf("base not hydrated: %v", keys(e.hydrated("base")))
	}
	for p := range e.Repo.Tree("hydrated") {
		if strings.HasPrefix(p, "prod/") || strings.HasPrefix(p, "old/") {
			t.Errorf("%s hydrated", p)
		}
	}

	e.Repo.Commit("docs", map[string]string{"docs/README.md": "y\n"}, "Docs")
	pr := e.Repo.OpenPR("docs", "main", "alice")
	e.comment(pr.Number, "alice", "/help")
	help := e.commentWith(pr.Number, "Strata commands").Body
	for _, want := range []string{"**Syncs:** `dev`, `base (deploy/base/strata-sync.yaml)`",
		"**Sync files the selector leaves out:** `old (envs/old/strata-sync.yaml)`, `prod (envs/prod/strata-sync.yaml)`"} {
		if !strings.Contains(help, want) {
			t.Errorf("/help lacks %q:\n%s", want, help)
		}
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// A PR that adds a Sync file gets a preview of it (every file new), but it
// is not hydrated anywhere nor can be taken over until it is merged; the
// merge hydrates it.
func TestHydrateDiscoveryPRPreviewsOnly(t *testing.T) {
	e := startDiscovery(t)
	first := e.push(map[string]string{"docs/README.md": "x\n"}, "Push")
	e.completed(first, "strata/hydrate: base")
	e.WaitIdle(syncsWait) // dev's hydration too
	tip := e.Repo.Branch("hydrated")

	e.Repo.Commit("web", map[string]string{"apps/web/strata-sync.yaml": syncFile("web", "env: dev", "../../deploy/overlays/dev", "web")}, "Add web")
	pr := e.Repo.OpenPR("web", "main", "alice")
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	cr := e.completed(pr.HeadSHA(), "strata/hydrate: web")
	if cr.Conclusion != "success" || cr.Title != "6 files would change" ||
		!strings.Contains(cr.Summary, "a sync the default branch does not have yet: every file is new") {
		t.Fatalf("preview = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	e.comment(pr.Number, "alice", "/takeover web")
	e.commentWith(pr.Number, "is not on the default branch")
	e.WaitIdle(syncsWait)
	if e.Repo.Branch("hydrated") != tip || len(e.hydrated("web")) != 0 {
		t.Fatal("a PR's Sync file was hydrated before its merge")
	}
	e.comment(pr.Number, "alice", "/help")
	if help := e.commentWith(pr.Number, "Strata commands").Body; !strings.Contains(help, "`web (apps/web/strata-sync.yaml), preview only until merged`") {
		t.Errorf("/help:\n%s", help)
	}

	merged := e.push(map[string]string{"apps/web/strata-sync.yaml": syncFile("web", "env: dev", "../../deploy/overlays/dev", "web")}, "Merge web")
	if cr := e.completed(merged, "strata/hydrate: web"); cr.Conclusion != "success" {
		t.Fatalf("merged = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if _, ok := e.hydrated("web")["deployment_dev_api.yaml"]; !ok {
		t.Errorf("web not hydrated after the merge: %v", keys(e.hydrated("web")))
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// A Sync file with a typo fails its own check with its file and line, on
// the PR that adds it and on the pushed commit; a file taking dev's name
// fails naming both files; the other syncs hydrate.
func TestHydrateDiscoveryBadFile(t *testing.T) {
	e := startDiscovery(t)
	typo := syncFile("api", "env: dev", ".", "api") + "  imagez: []\n"
	clash := syncFile("dev", "env: dev", ".", "dev2")

	e.Repo.Commit("typo", map[string]string{"deploy/overlays/dev/strata-sync.yaml": typo}, "Add api")
	pr := e.Repo.OpenPR("typo", "main", "alice")
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	cr := e.completed(pr.HeadSHA(), "strata/hydrate: api")
	if cr.Conclusion != "failure" || cr.ExternalID != "pr:1" ||
		!strings.Contains(cr.Summary, "`deploy/overlays/dev/strata-sync.yaml:9: unknown key \"imagez\" in sync \"api\" (did you mean \"images\"?)`") {
		t.Fatalf("PR check = %s %q %q\n%s", cr.Conclusion, cr.Title, cr.ExternalID, cr.Summary)
	}

	sha := e.push(map[string]string{"deploy/overlays/dev/strata-sync.yaml": typo, "apps/clash/strata-sync.yaml": clash}, "Push both")
	cr = e.completed(sha, "strata/hydrate: api")
	if cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "strata-sync.yaml:9: unknown key") {
		t.Errorf("push check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	cr = e.completed(sha, "strata/hydrate: apps/clash/strata-sync.yaml")
	if cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "`apps/clash/strata-sync.yaml:1: sync \"dev\" is also defined at .strata.yaml:8; rename one of them`") {
		t.Errorf("clash check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if cr := e.completed(sha, devHydrate); cr.Conclusion != "success" {
		t.Errorf("dev = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if cr := e.completed(sha, "strata/hydrate: base"); cr.Conclusion != "success" {
		t.Errorf("base = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}
