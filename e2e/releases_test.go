package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/util/wait"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/helm/helmtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// A writer comments /helm-test api -> the release is installed from the PR's
// chart (with its vendored subchart and values file), every test hook runs,
// and the check shows the table, revision, versions, values digest, the
// logs, and a Re-run button.
func TestReleasesHelmTestPasses(t *testing.T) {
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
		"| `api-test-a` | ✅ Succeeded |", "| `api-test-b` | ✅ Succeeded |", "| `api-test-c` | ✅ Succeeded |",
		"<details><summary>Logs of <code>api-test-a</code>", "a: connected to api", "Release writes", "/helm-test api")
	hist := e.cluster.History(ciNamespace, "api-pr-1")
	if len(hist) != 1 || hist[0].Info.Status != release.StatusDeployed {
		t.Fatalf("release history = %v", statuses(hist))
	}
	// The chart of the PR head, with the subchart from charts/ and ci-values.yaml.
	if rel := hist[0]; !strings.Contains(rel.Manifest, "api-pr-1-common") || rel.Config["greeting"] != "hi from ci" {
		t.Errorf("installed manifest %q, values %v", rel.Manifest, rel.Config)
	}
	// api-test-a's policy deleted its pod, after its logs were read.
	if e.cluster.PodExists(ciNamespace, "api-test-a") {
		t.Error("pod api-test-a survived its hook-succeeded policy")
	}
	noViolations(t, e.GitHub)
}

// A failing test hook -> failure check naming it, with its logs although its
// delete policy removed the pod, and secrets in the logs masked.
func TestReleasesFailingTestShowsLogs(t *testing.T) {
	e := startReleases(t, releaseOpts{}, apptest.Options{Configure: func(c *config.Server) { c.Redact = []string{`acme-token-[0-9]+`} }})
	e.Repo.SetPermission("alice", "write")
	e.cluster.FailWatch("api-test-b", errors.New("pod api-test-b failed"))
	e.cluster.SetLogs("api-test-b", "b: GET /healthz with acme-token-424242\nb: 500 internal error\n")
	pr := e.openPR("values", "alice")

	e.comment(pr.Number, "alice", "/helm-test")
	cr := e.completed(pr.HeadSHA(), apiCheck)
	if cr.Conclusion != "failure" || cr.Title != "Failed: api-test-b failed" {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	wantText(t, "check summary", cr.Summary, "Helm tests failed: failed", "| `api-test-b` | ❌ Failed |",
		"| `api-test-c` | ⏭️ Skipped |", "**`api-test-b` failed:** pod api-test-b failed",
		"<details><summary>Logs of <code>api-test-b</code> (Failed)", "500 internal error")
	if e.cluster.PodExists(ciNamespace, "api-test-b") {
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

// A hook that times out and one that cannot be created -> the cause is the
// check's title.
func TestReleasesTimeoutAndCreationError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(c *helmtest.FakeCluster)
		title string
		cause string
	}{
		{"timeout", func(c *helmtest.FakeCluster) { c.FailWatch("api-test-a", wait.ErrWaitTimeout) }, "Failed: api-test-a timed out", "**`api-test-a` timed out:**"},
		{"install", func(c *helmtest.FakeCluster) {
			c.FailWait(fmt.Errorf("resource ConfigMap/ci/api-pr-1 not ready: %w", context.DeadlineExceeded))
		},
			"Failed: the install timed out", "**The install timed out:**"},
		{"creation", func(c *helmtest.FakeCluster) {
			c.FailCreate("api-test-a", errors.New(`pods "api-test-a" is forbidden: exceeded quota`))
		}, "Failed: api-test-a could not be created", "exceeded quota"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := startReleases(t, releaseOpts{}, apptest.Options{})
			e.Repo.SetPermission("alice", "write")
			tc.setup(e.cluster)
			pr := e.openPR("values", "alice")
			e.comment(pr.Number, "alice", "/helm-test api")
			cr := e.completed(pr.HeadSHA(), apiCheck)
			if cr.Conclusion != "failure" || cr.Title != tc.title {
				t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
			}
			wantText(t, "check summary", cr.Summary, tc.cause)
			noViolations(t, e.GitHub)
		})
	}
}

// A release left pending-upgrade by a dead process -> unlocked first, the
// check says so, and the upgrade goes on.
func TestReleasesStuckPendingIsUnlocked(t *testing.T) {
	e := startReleases(t, releaseOpts{}, apptest.Options{})
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("values", "alice")
	e.comment(pr.Number, "alice", "/helm-test api")
	e.completed(pr.HeadSHA(), apiCheck)

	st := e.cluster.Releases(ciNamespace)
	last, err := st.Last("api-pr-1")
	if err != nil {
		t.Fatal(err)
	}
	stuck := *last
	stuck.Version = 2
	stuck.Info = &release.Info{Status: release.StatusPendingUpgrade}
	if err := st.Create(&stuck); err != nil {
		t.Fatal(err)
	}

	e.comment(pr.Number, "alice", "/helm-test api")
	runs := e.completedN(pr.HeadSHA(), apiCheck, 2)
	cr := runs[len(runs)-1]
	if cr.Conclusion != "success" || cr.Title != "Passed: 3 tests at revision 3" {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	wantText(t, "check summary", cr.Summary, "Revision 2 was stuck in `pending-upgrade` and was marked failed before the upgrade")
	if got := statuses(e.cluster.History(ciNamespace, "api-pr-1")); !slices.Equal(got, []string{"superseded", "failed", "deployed"}) {
		t.Errorf("history = %v", got)
	}
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
			t.Fatalf("first run = %s %q", cr.Conclusion, cr.Title)
		}
		e.cluster.FailWatch("api-test-a", errors.New("pod api-test-a failed"))
		e.comment(pr.Number, "alice", "/helm-test api")
		runs := e.completedN(pr.HeadSHA(), apiCheck, 2)
		cr := runs[len(runs)-1]
		if cr.Conclusion != "failure" || cr.Title != "Failed: api-test-a failed; rolled back to revision 1" {
			t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
		}
		wantText(t, "check summary", cr.Summary, "Remediation: rolled back to revision 1", "revision **3** (deployed)")
		noViolations(t, e.GitHub)
	})
	t.Run("uninstall", func(t *testing.T) {
		e := startReleases(t, releaseOpts{remediation: "uninstall"}, apptest.Options{})
		e.Repo.SetPermission("alice", "write")
		e.cluster.FailWatch("api-test-b", errors.New("pod api-test-b failed"))
		pr := e.openPR("values", "alice")
		e.comment(pr.Number, "alice", "/helm-test api")
		cr := e.completed(pr.HeadSHA(), apiCheck)
		if cr.Conclusion != "failure" || cr.Title != "Failed: api-test-b failed; uninstalled" {
			t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
		}
		wantText(t, "check summary", cr.Summary, "Remediation: uninstalled the release")
		if hist := e.cluster.History(ciNamespace, "api-pr-1"); len(hist) != 0 {
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
	if hist := e.cluster.History(ciNamespace, "api-pr-1"); len(hist) != 0 {
		t.Errorf("installed for a reader: %v", statuses(hist))
	}
	noViolations(t, e.GitHub)
}

// Closing (or merging) the PR -> its release with cleanup_on_close is
// uninstalled, and the PR says so.
func TestReleasesCleanupOnClose(t *testing.T) {
	for _, merged := range []bool{false, true} {
		name := map[bool]string{false: "closed", true: "merged"}[merged]
		t.Run(name, func(t *testing.T) {
			e := startReleases(t, releaseOpts{}, apptest.Options{})
			e.Repo.SetPermission("alice", "write")
			pr := e.openPR("values", "alice")
			e.comment(pr.Number, "alice", "/helm-test api")
			e.completed(pr.HeadSHA(), apiCheck)
			if len(e.cluster.History(ciNamespace, "api-pr-1")) != 1 {
				t.Fatal("not installed")
			}
			e.Repo.ClosePR(pr.Number, merged)
			e.Deliver(e.Repo.PullRequestEvent("closed", pr.Number))
			c := e.commentWith(pr.Number, "Uninstalled Helm release `api-pr-1`")
			wantText(t, "cleanup comment", c.Body, "the pull request was "+name, "cluster `ci`")
			if hist := e.cluster.History(ciNamespace, "api-pr-1"); len(hist) != 0 {
				t.Errorf("release still in storage: %v", statuses(hist))
			}
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
	e.Repo.Commit("preview", map[string]string{".strata.yaml": releaseOpts{extra: extra + preview}.strataYAML()}, "Add preview")
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
	if len(e.cluster.History("kube-system", "kube-proxy")) != 0 {
		t.Error("a release only the PR defines was installed")
	}
	noViolations(t, e.GitHub)
}

// Two replicas on one PostgreSQL, each sent /helm-test of the same release
// -> both runs complete, one after the other (the release's slot).
func TestReleasesOneRunAtATimeAcrossReplicas(t *testing.T) {
	db := storetest.URL(t, store.Postgres)
	a := startReleases(t, releaseOpts{}, apptest.Options{DatabaseURL: db})
	// The second replica reaches the same fake cluster.
	b := apptest.Start(t, apptest.Options{DatabaseURL: db, GitHub: a.GitHub, Clusters: fakes, Configure: func(c *config.Server) { c.Clusters = a.Config.Clusters }})
	a.Repo.SetPermission("alice", "write")
	a.cluster.DelayWatch(300 * time.Millisecond)
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
	st, err := store.Open(context.Background(), db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	spans := slotSpans(runLogs(t, st, "release_test", ""), "release")
	if len(spans) != 2 {
		t.Fatalf("%d runs with a slot, want 2: %v", len(spans), spans)
	}
	if spans[0][1] > spans[1][0] && spans[1][1] > spans[0][0] {
		t.Errorf("runs of one release overlapped: %v", spans)
	}
	noViolations(t, a.GitHub)
}

func statuses(hist []*release.Release) []string {
	var out []string
	for _, r := range hist {
		out = append(out, r.Info.Status.String())
	}
	return out
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
	if hist := e.cluster.History(ciNamespace, "api-pr-1"); len(hist) != 0 {
		t.Errorf("installed: %v", statuses(hist))
	}
	noViolations(t, e.GitHub)
}
