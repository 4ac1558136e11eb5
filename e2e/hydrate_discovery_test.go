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
	// Local: the web UI is fetched from this machine.
	return startSyncs(t, apptest.Options{Local: true}, files)
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

	// The repository page, which reads the store only, lists each sync with
	// the file that defines it, and the files not used with file and line.
	e.WaitIdle(syncsWait)
	e.Repo.SetPermission("wanda", "write")
	_, page := fetchPage(t, uiLogin(t, e.Env, "wanda"), e.Config.PublicURL+"/repos/acme/infra")
	for sync, file := range map[string]string{"dev": ".strata.yaml", "base": "deploy/base/strata-sync.yaml"} {
		if row := between(page, `<tr data-sync="`+sync+`">`, "</tr>"); !strings.Contains(row, `<td class="hide-narrow defined-in"><code>`+file+`</code></td>`) {
			t.Errorf("the repository page's %s row lacks its file %s:\n%s", sync, file, row)
		}
	}
	problems := between(page, `<ul id="sync-file-problems">`, "</ul>")
	for _, want := range []string{
		`<code>deploy/overlays/dev/strata-sync.yaml:9</code>: unknown key &#34;imagez&#34; in sync &#34;api&#34; (did you mean &#34;images&#34;?)`,
		`<code>apps/clash/strata-sync.yaml:1</code>: sync &#34;dev&#34; is also defined at .strata.yaml:8; rename one of them`,
	} {
		if !strings.Contains(problems, want) {
			t.Errorf("the repository page's Sync files not used lack %q:\n%s", want, problems)
		}
	}
	if skipped := between(page, `<p id="sync-files-skipped">`, "</p>"); !strings.Contains(skipped, "<code>old (envs/old/strata-sync.yaml)</code>, <code>prod (envs/prod/strata-sync.yaml)</code>") {
		t.Errorf("the repository page's Sync files left out: %q", skipped)
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// A pull request cannot widen discovery: sync_discovery is the default
// branch's. A PR whose .strata.yaml selects env: prod instead of env: dev
// gets no preview of prod's Sync file, which main's selector leaves out,
// cannot take it over, and hydrates nothing of it; the new Sync file it
// adds that main's selector keeps is previewed, and only previewed.
func TestHydrateDiscoveryPRCannotWidenIt(t *testing.T) {
	e := startDiscovery(t)
	first := e.push(map[string]string{"docs/README.md": "x\n"}, "Push")
	e.completed(first, "strata/hydrate: base")
	e.WaitIdle(syncsWait)
	tip := e.Repo.Branch("hydrated")
	e.Repo.SetPermission("mallory", "write")

	widened := strings.Replace(discoveryConfig, "matchLabels: {env: dev}", "matchLabels: {env: prod}", 1)
	e.Repo.Commit("widen", map[string]string{
		".strata.yaml":              widened,
		"apps/web/strata-sync.yaml": syncFile("web", "env: dev", "../../deploy/overlays/dev", "web"),
	}, "Deploy prod from this PR")
	pr := e.Repo.OpenPR("widen", "main", "mallory")
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	e.WaitIdle(syncsWait)
	if cr, ok := e.Repo.CheckRun(pr.HeadSHA(), "strata/hydrate: prod"); ok {
		t.Errorf("prod, which only the PR's selector keeps, was previewed: %s %q", cr.Conclusion, cr.Title)
	}
	e.comment(pr.Number, "mallory", "/takeover prod")
	e.commentWith(pr.Number, "no sync `prod` in this repository")

	cr := e.completed(pr.HeadSHA(), "strata/hydrate: web")
	if cr.Conclusion != "success" || !strings.Contains(cr.Summary, "a sync the default branch does not have yet: every file is new") {
		t.Fatalf("web's preview = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	e.comment(pr.Number, "mallory", "/takeover web")
	e.commentWith(pr.Number, "`web` is not on the default branch")
	e.comment(pr.Number, "mallory", "/help")
	help := e.commentWith(pr.Number, "Strata commands").Body
	for _, want := range []string{"`web (apps/web/strata-sync.yaml), preview only until merged`",
		"**Sync files the selector leaves out:** `old (envs/old/strata-sync.yaml)`, `prod (envs/prod/strata-sync.yaml)`"} {
		if !strings.Contains(help, want) {
			t.Errorf("/help lacks %q:\n%s", want, help)
		}
	}
	e.WaitIdle(syncsWait)
	if e.Repo.Branch("hydrated") != tip || len(e.hydrated("prod")) != 0 || len(e.hydrated("web")) != 0 {
		t.Fatalf("the PR hydrated into the destination: %v", keys(e.Repo.Tree("hydrated")))
	}
	if _, err := e.Server.Store().Takeover(t.Context(), "acme/infra", "prod"); err == nil {
		t.Error("prod is taken over")
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}
