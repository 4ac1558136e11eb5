package e2e

import (
	"context"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform/testprovider/providertest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
)

const (
	networkDrift = "strata/drift: infra/network"
	driftIssue   = "Drift detected in layer infra/network"
	// driftConfig asks for drift detection of every layer of the file.
	driftConfig = "version: 1\ndrift: {schedule: \"every 6h\"}\nlayers:\n  - dir: infra/network\n"
)

// driftScan runs the periodic drift scan now, as the queue's leader does
// every minute, and waits for the runs it enqueued: the test decides when
// time passes (testClock), never the wall clock. The servers of the drift
// tests schedule no periodic job of their own (ManualPeriodic): a scan on
// the wall clock, a minute into a slow run or late at start, would race
// the test's.
func driftScan(t *testing.T, e *apptest.Env) {
	t.Helper()
	runPeriodic(t, e, jobs.DriftScan{})
}

// runPeriodic runs a periodic job now, and waits for the queue to rest.
func runPeriodic(t *testing.T, e *apptest.Env, job river.JobArgs) {
	t.Helper()
	st := e.Server.Store()
	ctx := context.Background()
	var err error
	switch st.Dialect() {
	case store.Postgres:
		err = insertOnly(ctx, riverpgxv5.New(st.Pool()), job)
	default:
		err = insertOnly(ctx, riversqlite.New(st.DB()), job)
	}
	if err != nil {
		t.Fatalf("enqueue %s: %v", job.Kind(), err)
	}
	e.WaitIdle(layersWait)
}

func insertOnly[TTx any](ctx context.Context, driver riverdriver.Driver[TTx], args river.JobArgs) error {
	client, err := river.NewClient(driver, &river.Config{}) // insert-only: it works no job
	if err != nil {
		return err
	}
	_, err = client.Insert(ctx, args, nil)
	return err
}

// pushMain delivers the push of the default branch to its current head.
func pushMain(e *apptest.Env, before string) {
	e.Deliver(e.Repo.PushEvent("main", before, ""))
}

// hasMetric says whether /metrics serves line as is.
func hasMetric(t *testing.T, e *apptest.Env, line string) bool {
	t.Helper()
	res, err := http.Get("http://" + e.Server.MetricsAddr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return slices.Contains(strings.Split(string(body), "\n"), line)
}

// driftChecks are the drift checks of the layer on sha.
func driftChecks(e *layersEnv, sha string) []githubtest.CheckRun {
	return e.checksNamed(sha, networkDrift)
}

// driftIssues are the repository's issues titled for the layer's drift.
func driftIssues(repo *githubtest.Repo) []githubtest.Issue {
	var out []githubtest.Issue
	for _, is := range repo.Issues() {
		if is.Title == driftIssue {
			out = append(out, is)
		}
	}
	return out
}

// A layer applied through Strata is clean -> the real world changes
// behind Terraform -> the drift run's check fails with the plan summary
// and an issue reports the changed address -> a second drifted run updates
// that issue -> a PR applies the drift away -> the next run is clean:
// check success, issue closed with a comment.
func TestDriftDetectedReportedAndClosed(t *testing.T) {
	clock := &testClock{}
	e := startProviderLayers(t, apptest.Options{Clock: clock.Now, ManualPeriodic: true}, map[string][]providertest.Thing{network: nil})
	e.Repo.Commit("main", map[string]string{".strata.yaml": driftConfig}, "Ask for drift detection")
	e.Repo.SetPermission("alice", "write")
	before := e.Repo.Branch("main")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layer(network, providertest.Thing{Name: "a", Value: "one"})})
	e.comment(pr.Number, "alice", "/plan")
	e.completed(pr.HeadSHA(), networkPlan)
	e.comment(pr.Number, "alice", "/apply")
	if apply := e.completed(pr.HeadSHA(), networkApply); apply.Conclusion != "success" {
		t.Fatalf("apply = %+v", apply)
	}
	e.Repo.ClosePR(pr.Number, true)
	e.Deliver(e.Repo.PullRequestEvent("closed", pr.Number))
	pushMain(e.Env, before)
	e.WaitIdle(layersWait)
	head := e.Repo.Branch("main")

	// The first run comes at once: the push told Strata the layer asks.
	driftScan(t, e.Env)
	runs := driftChecks(e.layersEnv, head)
	if len(runs) != 1 || runs[0].Conclusion != "success" || runs[0].Title != "No drift" {
		t.Fatalf("first drift check = %+v", runs)
	}
	if got := driftIssues(e.Repo); len(got) != 0 {
		t.Fatalf("issues on a clean layer: %+v", got)
	}
	// Not due again before 6h have passed.
	driftScan(t, e.Env)
	if n := len(driftChecks(e.layersEnv, head)); n != 1 {
		t.Fatalf("a scan before the schedule ran the layer again: %d checks", n)
	}

	e.world.Set(t, "a", "changed-by-hand")
	clock.elapse(t, e.Server.Store(), 6*time.Hour)
	driftScan(t, e.Env)
	runs = driftChecks(e.layersEnv, head)
	if len(runs) != 2 {
		t.Fatalf("drift checks after 6h = %d, want 2", len(runs))
	}
	drifted := runs[1]
	if drifted.Conclusion != "failure" || drifted.Title != "Drifted: 0 to add, 1 to change, 0 to destroy" ||
		!strings.Contains(drifted.Summary, "world_thing.a") {
		t.Fatalf("drifted check = %s %q %q", drifted.Conclusion, drifted.Title, drifted.Summary)
	}
	issues := driftIssues(e.Repo)
	if len(issues) != 1 || issues[0].State != "open" || !strings.Contains(issues[0].Body, "0 to add, 1 to change, 0 to destroy") ||
		!strings.Contains(issues[0].Body, "`world_thing.a`") || !strings.Contains(issues[0].Body, "changed-by-hand") {
		t.Fatalf("drift issue = %+v", issues)
	}
	number := issues[0].Number
	if !hasMetric(t, e.Env, `strata_drift_layers{state="drifted"} 1`) || !hasMetric(t, e.Env, `strata_drift_layers{state="clean"} 0`) {
		t.Error("strata_drift_layers does not count the drifted layer")
	}
	if !strings.Contains(drifted.Summary, "#"+strconv.Itoa(number)) {
		t.Errorf("drifted check does not name issue #%d: %q", number, drifted.Summary)
	}

	// Still drifted 6h later: the same issue, updated.
	clock.elapse(t, e.Server.Store(), 6*time.Hour)
	driftScan(t, e.Env)
	if issues := driftIssues(e.Repo); len(issues) != 1 || issues[0].Number != number || issues[0].State != "open" {
		t.Fatalf("issues after a second drifted run = %+v", issues)
	}
	still := e.Repo.Comments(number)
	if len(still) != 1 || !strings.Contains(still[0].Body, "Still drifted") || !strings.Contains(still[0].Body, "`world_thing.a`") {
		t.Fatalf("issue comments after a second drifted run = %+v", still)
	}

	// Someone closes the issue by hand while the drift stays: the next
	// drifted run opens a new one.
	e.Repo.CloseIssue(number)
	clock.elapse(t, e.Server.Store(), 6*time.Hour)
	driftScan(t, e.Env)
	issues = driftIssues(e.Repo)
	if len(issues) != 2 || issues[0].State != "closed" || issues[1].State != "open" {
		t.Fatalf("issues after the first was closed by hand = %+v", issues)
	}
	number = issues[1].Number

	// The drift is applied away: a PR's /apply puts the real world back to
	// what the layer says; once it is merged, the next run is clean and
	// closes the issue.
	before = e.Repo.Branch("main")
	fix := e.openPR("fix", "alice", map[string]string{network + "/main.tf": e.layer(network, providertest.Thing{Name: "a", Value: "one"}) + "# applied again\n"})
	e.comment(fix.Number, "alice", "/plan")
	if plan := e.completed(fix.HeadSHA(), networkPlan); plan.Title != "0 to add, 1 to change, 0 to destroy" {
		t.Fatalf("plan of the fix = %s %q", plan.Conclusion, plan.Title)
	}
	e.comment(fix.Number, "alice", "/apply")
	if apply := e.completed(fix.HeadSHA(), networkApply); apply.Conclusion != "success" {
		t.Fatalf("apply of the fix = %+v", apply)
	}
	if v, _ := e.world.Get(t, "a"); v != "one" {
		t.Fatalf("the real world after the apply holds %q, want %q", v, "one")
	}
	e.Repo.ClosePR(fix.Number, true)
	e.Deliver(e.Repo.PullRequestEvent("closed", fix.Number))
	pushMain(e.Env, before)
	e.WaitIdle(layersWait)
	head = e.Repo.Branch("main")
	clock.elapse(t, e.Server.Store(), 6*time.Hour)
	driftScan(t, e.Env)
	runs = driftChecks(e.layersEnv, head)
	if len(runs) != 1 || runs[0].Conclusion != "success" || runs[0].Title != "No drift" {
		t.Fatalf("drift checks after the fix = %+v", runs)
	}
	if issues := driftIssues(e.Repo); len(issues) != 2 || issues[1].State != "closed" {
		t.Fatalf("issue after a clean run = %+v", issues)
	}
	if !hasMetric(t, e.Env, `strata_drift_layers{state="clean"} 1`) || !hasMetric(t, e.Env, `strata_drift_layers{state="drifted"} 0`) {
		t.Error("strata_drift_layers does not count the clean layer")
	}
	comments := e.Repo.Comments(number)
	if last := comments[len(comments)-1]; !strings.Contains(last.Body, "No drift any more") {
		t.Errorf("closing comment = %q", last.Body)
	}
	noViolations(t, e.GitHub)
}

// A repository that asked for drift before any push Strata saw is found
// by the discovery of installed repositories. A layer locked by a PR is
// skipped by the drift scan and run by the next scan after the lock is
// released; the PR's own .strata.yaml, which turns drift off, changes
// nothing: drift is read from the default branch only. A restart keeps
// when each layer is due.
func TestDriftSkipsLockedLayerAndIgnoresPRConfig(t *testing.T) {
	clock := &testClock{}
	e := startProviderLayers(t, apptest.Options{Clock: clock.Now, ManualPeriodic: true}, map[string][]providertest.Thing{network: nil})
	// The PR holds the lock before the default branch asks for drift, so
	// that every scan finds the layer locked until the PR closes.
	pr := e.openPR("off", "alice", map[string]string{
		".strata.yaml":       "version: 1\nlayers:\n  - dir: infra/network\n    drift: {enabled: false}\n",
		network + "/main.tf": e.layer(network, providertest.Thing{Name: "b", Value: "two"}),
	})
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	e.completed(pr.HeadSHA(), networkPlan)
	if _, ok := e.Repo.CheckRun(pr.HeadSHA(), networkLock); !ok {
		t.Fatal("the PR's plan took no lock")
	}
	e.Repo.Commit("main", map[string]string{".strata.yaml": driftConfig}, "Ask for drift detection")
	runPeriodic(t, e.Env, jobs.DriftDiscover{})
	head := e.Repo.Branch("main")

	driftScan(t, e.Env)
	if runs := driftChecks(e.layersEnv, head); len(runs) != 0 {
		t.Fatalf("a locked layer was planned for drift: %+v", runs)
	}

	e.Repo.ClosePR(pr.Number, false)
	e.Deliver(e.Repo.PullRequestEvent("closed", pr.Number))
	e.WaitIdle(layersWait)
	driftScan(t, e.Env)
	runs := driftChecks(e.layersEnv, head)
	if len(runs) != 1 || runs[0].Conclusion != "success" {
		t.Fatalf("drift check after the lock was released = %+v", runs)
	}

	// A restart keeps when the layer is due: its scan at start runs
	// nothing, and the layer runs again once 6h have passed.
	e.Stop()
	again := e.another(t, apptest.Options{DatabaseURL: e.Config.DatabaseURL, DataDir: e.Config.DataDir, GitHub: e.GitHub, Clock: clock.Now, ManualPeriodic: true})
	driftScan(t, again.Env)
	if runs := driftChecks(again.layersEnv, head); len(runs) != 1 {
		t.Fatalf("drift checks after a restart = %d, want still 1", len(runs))
	}
	clock.elapse(t, again.Server.Store(), 6*time.Hour)
	driftScan(t, again.Env)
	if runs := driftChecks(again.layersEnv, head); len(runs) != 2 {
		t.Fatalf("drift checks 6h after the restart = %d, want 2", len(runs))
	}
	// Every scan was one the test ran: neither server scheduled its own,
	// not even at start.
	var scans int
	st := again.Server.Store()
	if err := st.DB().QueryRow(st.Rebind(`SELECT count(*) FROM river_job WHERE kind = ?`), jobs.DriftScan{}.Kind()).Scan(&scans); err != nil || scans != 4 {
		t.Errorf("%d drift scans (%v), want the test's 4", scans, err)
	}
	noViolations(t, e.GitHub)
}
