package e2e

import (
	"fmt"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// A server killed (SIGKILL) in the middle of an upgrade, while its
// pre-upgrade hook runs, leaves the release pending-upgrade in the cluster
// -> the next server completes the check as interrupted; the next
// /helm-test marks the stuck revision failed, says so in the check, and
// upgrades.
func TestReleasesInterruptedUpgradeIsUnlocked(t *testing.T) {
	e := startReleases(t, releaseOpts{timeout: "2m"}, apptest.Options{})
	e.Stop() // the release's first run is by the process below
	serverConfig := filepath.Join(t.TempDir(), "strata.yaml")
	writeTemp(t, serverConfig, fmt.Sprintf("clusters:\n  - name: ci\n    kubeconfig: %s\n", e.cluster.Kubeconfig))
	dbURL, dataDir := storetest.URL(t, store.SQLite), t.TempDir()
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("values", "alice")

	p := serve(t, e.GitHub, serverConfig, dbURL, dataDir)
	p.deliver(e.Repo.IssueCommentEvent(pr.Number, "alice", "/helm-test api"))
	if cr := e.completedN(pr.HeadSHA(), apiCheck, 1)[0]; cr.Title != "Passed: 3 tests at revision 1" {
		t.Fatalf("install = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}

	// The upgrade's pre-upgrade hook never ends: revision 2 stays pending.
	e.Repo.Commit("values", map[string]string{"charts/api/templates/migrate.yaml": migrateHook("forever")}, "Slow migration")
	head := pr.HeadSHA()
	p.deliver(e.Repo.IssueCommentEvent(pr.Number, "alice", "/helm-test api"))
	e.GitHub.WaitFor(t, releasesWait, func() bool {
		h := e.history("api-pr-1")
		return len(h) == 2 && h[1].Info.Status.String() == "pending-upgrade" && e.podExists("api-migrate")
	})
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done

	next := apptest.Start(t, apptest.Options{DatabaseURL: dbURL, DataDir: dataDir, GitHub: e.GitHub,
		Configure: func(c *config.Server) { c.Clusters = []config.Cluster{e.cluster} }})
	cr := e.completedN(head, apiCheck, 1)[0]
	if cr.Conclusion != "failure" || cr.Title != "Helm test interrupted" {
		t.Fatalf("interrupted check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if got := statuses(e.history("api-pr-1")); !slices.Equal(got, []string{"deployed", "pending-upgrade"}) {
		t.Fatalf("history after the kill = %v", got)
	}

	e.Repo.Commit("values", map[string]string{"charts/api/templates/migrate.yaml": migrateHook("0")}, "Fast migration")
	next.Deliver(e.Repo.IssueCommentEvent(pr.Number, "alice", "/helm-test api"))
	cr = e.completedN(pr.HeadSHA(), apiCheck, 1)[0]
	if cr.Conclusion != "success" || cr.Title != "Passed: 3 tests at revision 3" {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	wantText(t, "check summary", cr.Summary, "Revision 2 was stuck in `pending-upgrade` and was marked failed before the upgrade",
		hookLogs["api-migrate"])
	if got := statuses(e.history("api-pr-1")); !slices.Equal(got, []string{"superseded", "failed", "deployed"}) {
		t.Errorf("history = %v", got)
	}
	noViolations(t, e.GitHub)
}
