package e2e

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// A writer comments /helm-test api -> the release is installed from the PR's
// chart (with its vendored subchart and values file) and its Deployment
// waited for; every test hook runs, and the check shows the table,
// revision, versions, values digest, the logs (also of api-test-a, whose
// pod hook-succeeded deleted) and a Re-run button. A new commit and
// /helm-test again -> an upgrade, whose pre- and post-upgrade hooks are in
// the check with their logs.
func TestReleasesHelmTestInstallsThenUpgrades(t *testing.T) {
	e := startReleases(t, releaseOpts{}, apptest.Options{})
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("values", "alice")

	e.comment(pr.Number, "alice", "/helm-test api")
	cr := e.completed(pr.HeadSHA(), apiCheck)
	if cr.Conclusion != "success" || cr.Title != "Passed: 3 tests at revision 1" {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if cr.ExternalID != "pr:1" || !slices.Equal(actionIDs(cr), []string{"helm-test"}) {
		t.Errorf("external id %q, buttons %v", cr.ExternalID, actionIDs(cr))
	}
	wantText(t, "check summary", cr.Summary,
		"Helm tests passed", "revision **1** (deployed)", "install of chart `api` 1.2.3", "app version 4.5.6", "values `sha256:",
		"<details><summary>Logs of <code>api-test-a</code> (Succeeded)", hookLogs["api-test-a"], hookLogs["api-test-b"], hookLogs["api-test-c"],
		"Release writes", "/helm-test api")
	for _, hook := range []string{"api-test-a", "api-test-b", "api-test-c"} {
		wantHookRow(t, cr.Summary, hook, "✅ Succeeded")
	}
	hist := e.history("api-pr-1")
	if len(hist) != 1 || hist[0].Info.Status.String() != "deployed" {
		t.Fatalf("release history = %v", statuses(hist))
	}
	// The chart of the PR head, with the subchart from charts/ and ci-values.yaml.
	if rel := hist[0]; !strings.Contains(rel.Manifest, "api-pr-1-common") || rel.Config["greeting"] != "hi from ci" {
		t.Errorf("installed manifest %q, values %v", rel.Manifest, rel.Config)
	}
	if e.podExists("api-test-a") {
		t.Error("pod api-test-a survived its hook-succeeded policy")
	}
	if !e.podExists("api-test-c") {
		t.Error("pod api-test-c, without a delete policy, is gone")
	}
	e.wantDeploymentAvailable("api-pr-1")

	e.Repo.Commit("values", map[string]string{"charts/api/values.yaml": "greeting: hello again\n"}, "Change again")
	e.comment(pr.Number, "alice", "/helm-test api")
	cr = e.completed(pr.HeadSHA(), apiCheck)
	if cr.Conclusion != "success" || cr.Title != "Passed: 3 tests at revision 2" {
		t.Fatalf("upgrade check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	wantText(t, "upgrade check", cr.Summary, "revision **2** (deployed) after the upgrade",
		"| upgrade hook | event | phase | duration |",
		"<details><summary>Logs of <code>api-migrate</code> (pre-upgrade, Succeeded)", hookLogs["api-migrate"],
		"<details><summary>Logs of <code>api-notify</code> (post-upgrade, Succeeded)", hookLogs["api-notify"])
	if !regexp.MustCompile("\\| `api-migrate` \\| pre-upgrade \\| ✅ Succeeded \\| [0-9.]+m?s \\|").MatchString(cr.Summary) {
		t.Errorf("no row with a duration for api-migrate:\n%s", cr.Summary)
	}
	if e.podExists("api-migrate") {
		t.Error("pod api-migrate survived its hook-succeeded policy")
	}
	if got := statuses(e.history("api-pr-1")); !slices.Equal(got, []string{"superseded", "deployed"}) {
		t.Errorf("history = %v", got)
	}
	noViolations(t, e.GitHub)
}

// wantHookRow fails the test unless the check's table has hook with the
// phase and a measured duration.
func wantHookRow(t *testing.T, summary, hook, phase string) {
	t.Helper()
	row := regexp.MustCompile("\\| `" + regexp.QuoteMeta(hook) + "` \\| " + regexp.QuoteMeta(phase) + " \\| [0-9.]+(ms|s|m[0-9.]*s) \\|")
	if !row.MatchString(summary) {
		t.Errorf("no row `%s` | %s | DURATION in:\n%s", hook, phase, summary)
	}
}

// wantDeploymentAvailable checks that the release's Deployment is there and
// available, as --wait waited for.
func (e *releasesEnv) wantDeploymentAvailable(name string) {
	e.t.Helper()
	d, err := e.kube.Client.AppsV1().Deployments(e.namespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		e.t.Fatalf("deployment %s: %v", name, err)
	}
	for _, c := range d.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == "True" && d.Status.ReadyReplicas == 1 {
			return
		}
	}
	e.t.Errorf("deployment %s not available: %+v", name, d.Status)
}

// A test hook that exits 3 -> failure check naming it, with phase, duration
// and its logs although its delete policy removed the pod, secrets in the
// logs masked, the hook after it skipped.
func TestReleasesFailingTestShowsLogs(t *testing.T) {
	e := startReleases(t, releaseOpts{}, apptest.Options{Configure: func(c *config.Server) { c.Redact = []string{`acme-token-[0-9]+`} }})
	e.Repo.SetPermission("alice", "write")
	logs := "b: GET /healthz with acme-token-424242\nb: 500 internal error"
	e.kube.SetLogs(t, e.namespace, "api-test-b", logs+"\n")
	pr := e.openPR("values", "alice", map[string]string{"charts/api/templates/tests/b.yaml": testHookPrinting("b", logs, "3")})

	e.comment(pr.Number, "alice", "/helm-test")
	cr := e.completed(pr.HeadSHA(), apiCheck)
	if cr.Conclusion != "failure" || cr.Title != "Failed: api-test-b failed" {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	wantHookRow(t, cr.Summary, "api-test-a", "✅ Succeeded")
	wantHookRow(t, cr.Summary, "api-test-b", "❌ Failed")
	wantText(t, "check summary", cr.Summary, "Helm tests failed: failed", "| `api-test-c` | ⏭️ Skipped |",
		"**`api-test-b` failed:**", "pod api-test-b failed",
		"<details><summary>Logs of <code>api-test-b</code> (Failed)", "500 internal error")
	if e.podExists("api-test-b") {
		t.Error("pod api-test-b survived its hook-failed policy")
	}
	if strings.Contains(cr.Summary+cr.Text+cr.Title, "acme-token-424242") {
		t.Fatal("a secret from the hook's logs reached GitHub")
	}
	for _, log := range runLogs(t, e.Server.Store(), "release_test", "") {
		if strings.Contains(log, "acme-token-424242") {
			t.Fatal("a secret reached the run log")
		}
		wantText(t, "run log", log, "500 internal error", "[strata] hook api-test-b: Failed, started ")
	}
	noViolations(t, e.GitHub)
}

// A test hook that never ends -> the check says it timed out, after the
// release's test timeout.
func TestReleasesTestTimeout(t *testing.T) {
	e := startReleases(t, releaseOpts{timeout: "20s"}, apptest.Options{})
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("values", "alice", map[string]string{"charts/api/templates/tests/a.yaml": testHook("a", "forever")})
	e.comment(pr.Number, "alice", "/helm-test api")
	cr := e.completed(pr.HeadSHA(), apiCheck)
	if cr.Conclusion != "failure" || cr.Title != "Failed: api-test-a timed out" {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	wantText(t, "check summary", cr.Summary, "**`api-test-a` timed out:**", hookLogs["api-test-a"])
	noViolations(t, e.GitHub)
}

// remediation: rollback -> a failed test of an upgrade rolls back to the
// last good revision; remediation: uninstall -> the release is removed.
func TestReleasesRemediation(t *testing.T) {
	t.Run("rollback", func(t *testing.T) {
		e := startReleases(t, releaseOpts{remediation: "rollback"}, apptest.Options{})
		e.Repo.SetPermission("alice", "write")
		pr := e.openPR("values", "alice")
		e.comment(pr.Number, "alice", "/helm-test api")
		if cr := e.completed(pr.HeadSHA(), apiCheck); cr.Conclusion != "success" {
			t.Fatalf("first run = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
		}
		e.Repo.Commit("values", map[string]string{"charts/api/templates/tests/a.yaml": testHook("a", "1")}, "Break test a")
		e.comment(pr.Number, "alice", "/helm-test api")
		cr := e.completed(pr.HeadSHA(), apiCheck)
		if cr.Conclusion != "failure" || cr.Title != "Failed: api-test-a failed; rolled back to revision 1" {
			t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
		}
		wantText(t, "check summary", cr.Summary, "Remediation: rolled back to revision 1", "revision **3** (deployed)")
		if got := statuses(e.history("api-pr-1")); !slices.Equal(got, []string{"superseded", "superseded", "deployed"}) {
			t.Errorf("history = %v", got)
		}
		noViolations(t, e.GitHub)
	})
	t.Run("uninstall", func(t *testing.T) {
		e := startReleases(t, releaseOpts{remediation: "uninstall"}, apptest.Options{})
		e.Repo.SetPermission("alice", "write")
		pr := e.openPR("values", "alice", map[string]string{"charts/api/templates/tests/b.yaml": testHook("b", "2")})
		e.comment(pr.Number, "alice", "/helm-test api")
		cr := e.completed(pr.HeadSHA(), apiCheck)
		if cr.Conclusion != "failure" || cr.Title != "Failed: api-test-b failed; uninstalled" {
			t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
		}
		wantText(t, "check summary", cr.Summary, "Remediation: uninstalled the release")
		if hist := e.history("api-pr-1"); len(hist) != 0 {
			t.Errorf("release still in storage: %v", statuses(hist))
		}
		noViolations(t, e.GitHub)
	})
}

// The Re-run button, and GitHub's own Re-run -> the release is tested again
// for the user who pressed it.
func TestReleasesRerunButton(t *testing.T) {
	e := startReleases(t, releaseOpts{}, apptest.Options{})
	e.Repo.SetPermission("alice", "write")
	e.Repo.SetPermission("maintainer", "maintain")
	pr := e.openPR("values", "alice")
	e.comment(pr.Number, "alice", "/helm-test api")
	first := e.completed(pr.HeadSHA(), apiCheck)

	e.Deliver(e.Repo.CheckRunEvent("requested_action", first.ID, "helm-test", "maintainer"))
	runs := e.completedN(pr.HeadSHA(), apiCheck, 2)
	second := runs[len(runs)-1]
	if second.Conclusion != "success" || second.Title != "Passed: 3 tests at revision 2" || !strings.Contains(second.Summary, "@maintainer") {
		t.Fatalf("re-run = %s %q\n%s", second.Conclusion, second.Title, second.Summary)
	}
	e.Deliver(e.Repo.CheckRunEvent("rerequested", second.ID, "", "alice"))
	runs = e.completedN(pr.HeadSHA(), apiCheck, 3)
	if third := runs[len(runs)-1]; third.Title != "Passed: 3 tests at revision 3" {
		t.Fatalf("GitHub's re-run = %s %q", third.Conclusion, third.Title)
	}
	noViolations(t, e.GitHub)
}

// A user with read permission -> refused, with a failed check whose Re-run
// a writer can press; nothing installed.
func TestReleasesNeedWritePermission(t *testing.T) {
	e := startReleases(t, releaseOpts{}, apptest.Options{})
	e.Repo.SetPermission("reader", "read")
	pr := e.openPR("values", "alice")
	e.comment(pr.Number, "reader", "/helm-test api")
	c := e.commentWith(pr.Number, "refused")
	wantText(t, "refusal", c.Body, "@reader has read permission", "needs write or higher")
	cr := e.completed(pr.HeadSHA(), apiCheck)
	if cr.Conclusion != "failure" || cr.ExternalID != "pr:1" || !slices.Equal(actionIDs(cr), []string{"helm-test"}) {
		t.Errorf("check = %+v", cr)
	}
	if hist := e.history("api-pr-1"); len(hist) != 0 {
		t.Errorf("installed for a reader: %v", statuses(hist))
	}
	noViolations(t, e.GitHub)
}

// Two PRs test their releases; closing (or merging) one -> its release is
// uninstalled and the PR says so; the other PR's release stays.
func TestReleasesCleanupOnClose(t *testing.T) {
	for _, merged := range []bool{false, true} {
		name := map[bool]string{false: "closed", true: "merged"}[merged]
		t.Run(name, func(t *testing.T) {
			e := startReleases(t, releaseOpts{}, apptest.Options{})
			e.Repo.SetPermission("alice", "write")
			pr := e.openPR("values", "alice")
			other := e.openPR("other", "alice")
			e.comment(pr.Number, "alice", "/helm-test api")
			e.comment(other.Number, "alice", "/helm-test api")
			e.completed(pr.HeadSHA(), apiCheck)
			e.completed(other.HeadSHA(), apiCheck)
			if len(e.history("api-pr-1")) != 1 || len(e.history("api-pr-2")) != 1 {
				t.Fatal("not installed")
			}
			e.Repo.ClosePR(pr.Number, merged)
			e.Deliver(e.Repo.PullRequestEvent("closed", pr.Number))
			c := e.commentWith(pr.Number, "Uninstalled Helm release `api-pr-1`")
			wantText(t, "cleanup comment", c.Body, "the pull request was "+name, "cluster `ci`")
			if hist := e.history("api-pr-1"); len(hist) != 0 {
				t.Errorf("release still in storage: %v", statuses(hist))
			}
			if _, err := e.kube.Client.AppsV1().Deployments(e.namespace).Get(context.Background(), "api-pr-1", metav1.GetOptions{}); err == nil {
				t.Error("the uninstalled release's Deployment is still there")
			}
			if got := statuses(e.history("api-pr-2")); !slices.Equal(got, []string{"deployed"}) {
				t.Errorf("the other PR's release = %v", got)
			}
			e.wantDeploymentAvailable("api-pr-2")
			noViolations(t, e.GitHub)
		})
	}
}

// An unknown release, a release on a cluster the server lacks, and a release
// only the PR defines -> refused with a reply that says why; nothing runs.
func TestReleasesRefusedPolitely(t *testing.T) {
	extra := "  - name: web\n    chart: charts/api\n    namespace: ci\n    cluster: prod\n"
	e := startReleases(t, releaseOpts{extra: extra}, apptest.Options{})
	e.Repo.SetPermission("alice", "write")
	preview := "  - name: preview\n    chart: charts/api\n    release_name: kube-proxy\n    namespace: kube-system\n    cluster: ci\n"
	e.Repo.Commit("preview", map[string]string{".strata.yaml": releaseOpts{extra: extra + preview}.strataYAML(e.namespace)}, "Add preview")
	pr := e.Repo.OpenPR("preview", "main", "alice")

	e.comment(pr.Number, "alice", "/helm-test nope")
	c := e.commentWith(pr.Number, "no release `nope`")
	wantText(t, "reply", c.Body, "its releases are: `api`, `web`, `preview`")

	e.comment(pr.Number, "alice", "/helm-test web preview")
	c = e.commentWith(pr.Number, "Strata will not test")
	wantText(t, "reply", c.Body, "`web`: it names cluster `prod`, which this Strata server does not define; its clusters are: `ci`",
		"`preview`: this release is not on the default branch")
	for _, name := range []string{"strata/helm-test: web", "strata/helm-test: preview"} {
		if cr := e.completed(pr.HeadSHA(), name); cr.Conclusion != "failure" || cr.Title != "Helm test refused" {
			t.Errorf("%s = %s %q", name, cr.Conclusion, cr.Title)
		}
	}
	secrets, err := e.kube.Client.CoreV1().Secrets("kube-system").List(context.Background(), metav1.ListOptions{LabelSelector: "owner=helm,name=kube-proxy"})
	if err != nil || len(secrets.Items) != 0 {
		t.Errorf("a release only the PR defines was installed (%v)", err)
	}
	noViolations(t, e.GitHub)
}

// Two replicas on one PostgreSQL, each sent /helm-test of the same release
// -> both runs complete, one after the other (the release's slot).
func TestReleasesOneRunAtATimeAcrossReplicas(t *testing.T) {
	db := storetest.URL(t, store.Postgres)
	a := startReleases(t, releaseOpts{}, apptest.Options{DatabaseURL: db})
	b := apptest.Start(t, apptest.Options{DatabaseURL: db, GitHub: a.GitHub,
		Configure: func(c *config.Server) { c.Clusters = a.Config.Clusters }})
	a.Repo.SetPermission("alice", "write")
	pr := a.openPR("values", "alice")

	var wg sync.WaitGroup
	for _, env := range []*apptest.Env{a.Env, b} {
		wg.Add(1)
		go func() { defer wg.Done(); env.Deliver(env.Repo.IssueCommentEvent(pr.Number, "alice", "/helm-test api")) }()
	}
	wg.Wait()
	runs := a.completedN(pr.HeadSHA(), apiCheck, 2)
	var titles []string
	for _, cr := range runs {
		titles = append(titles, cr.Title)
	}
	slices.Sort(titles)
	if !slices.Equal(titles, []string{"Passed: 3 tests at revision 1", "Passed: 3 tests at revision 2"}) {
		t.Errorf("runs = %v", titles)
	}
	spans := slotSpans("release", a.Env, b)
	if len(spans) != 2 {
		t.Fatalf("%d runs with a slot, want 2: %v", len(spans), spans)
	}
	if spans[0][1] > spans[1][0] && spans[1][1] > spans[0][0] {
		t.Errorf("runs of one release overlapped: %v", spans)
	}
	noViolations(t, a.GitHub)
}

// A chart that names a dependency its charts/ dir lacks -> nothing is
// installed, the check says the run could not be carried out and why.
func TestReleasesChartErrorReported(t *testing.T) {
	e := startReleases(t, releaseOpts{}, apptest.Options{})
	e.Repo.SetPermission("alice", "write")
	e.Repo.Commit("deps", map[string]string{"charts/api/Chart.yaml": "apiVersion: v2\nname: api\nversion: 1.2.4\n" +
		"dependencies:\n  - name: common\n    version: 0.1.0\n  - name: redis\n    version: 18.0.0\n"}, "Add redis")
	pr := e.Repo.OpenPR("deps", "main", "alice")
	e.comment(pr.Number, "alice", "/helm-test api")
	cr := e.completed(pr.HeadSHA(), apiCheck)
	if cr.Conclusion != "failure" || cr.Title != "Helm test could not run" || !slices.Equal(actionIDs(cr), []string{"helm-test"}) {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	wantText(t, "check summary", cr.Summary, "redis", "helm dependency build")
	if hist := e.history("api-pr-1"); len(hist) != 0 {
		t.Errorf("installed: %v", statuses(hist))
	}
	noViolations(t, e.GitHub)
}
