package e2e

import (
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform/testprovider/providertest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// Drift detection and apply on merge with managed state (issue 18, item
// 7): both read the state Strata keeps, not an empty one in the run's
// copy of the tree, where every resource would show as to add.

// managedLayer is a main.tf of the test provider's things that declares
// no backend: Strata keeps its state.
func (p *providerEnv) managedLayer(things ...providertest.Thing) string {
	return providertest.Layer(p.world.Dir, things...)
}

// stateVersions are the versions Strata keeps of the network layer's
// state, newest first.
func (p *providerEnv) stateVersions() []*store.StateVersion {
	p.t.Helper()
	vs, err := p.Server.Store().StateVersions(p.t.Context(), store.StateKey{Repo: p.Repo.FullName(), Layer: network}, 0)
	if err != nil {
		p.t.Fatal(err)
	}
	return vs
}

// A layer with managed state applied through a PR -> a restart (SQLite,
// the same data dir) -> the drift run reads Strata's state: "No drift" (an
// empty state would have the thing to add: drifted) -> the real world
// changes behind Terraform -> the next drift run reports exactly that
// change. Drift runs read the state and write no version, and leave no
// state lock.
func TestManagedStateDriftAfterRestart(t *testing.T) {
	clock := &testClock{}
	opts := apptest.Options{Clock: clock.Now, ManualPeriodic: true, DatabaseURL: storetest.URL(t, store.SQLite), DataDir: t.TempDir()}
	e := startProviderLayers(t, opts, map[string][]providertest.Thing{network: nil})
	e.Repo.Commit("main", map[string]string{".strata.yaml": driftConfig, network + "/main.tf": e.managedLayer()},
		"Ask for drift detection; Strata keeps the state")
	e.Repo.SetPermission("alice", "write")
	before := e.Repo.Branch("main")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.managedLayer(providertest.Thing{Name: "a", Value: "one"})})
	e.comment(pr.Number, "alice", "/plan")
	if plan := e.completed(pr.HeadSHA(), networkPlan); plan.Title != "1 to add, 0 to change, 0 to destroy" {
		t.Fatalf("plan = %s %q %q", plan.Conclusion, plan.Title, plan.Summary)
	}
	e.comment(pr.Number, "alice", "/apply")
	if apply := e.completed(pr.HeadSHA(), networkApply); apply.Conclusion != "success" {
		t.Fatalf("apply = %s %q %q", apply.Conclusion, apply.Summary, apply.Text)
	}
	e.Repo.ClosePR(pr.Number, true)
	e.Deliver(e.Repo.PullRequestEvent("closed", pr.Number))
	pushMain(e.Env, before)
	e.WaitIdle(layersWait)
	head := e.Repo.Branch("main")
	applied := e.stateVersions()
	if len(applied) != 1 || applied[0].PR != pr.Number || applied[0].Commit != pr.HeadSHA() {
		t.Fatalf("after the apply: %s; want one version, the apply's", describeVersions(applied))
	}
	e.Stop()

	opts.GitHub = e.GitHub
	e = e.another(t, opts)
	driftScan(t, e.Env)
	runs := driftChecks(e.layersEnv, head)
	if len(runs) != 1 || runs[0].Conclusion != "success" || runs[0].Title != "No drift" {
		t.Fatalf("drift check after the restart = %+v; want No drift, from Strata's state", runs)
	}
	if logs := strings.Join(runLogs(t, e.Server.Store(), "drift_run", e.Repo.FullName()), "\n"); !strings.Contains(logs, "[strata] state: kept by Strata") {
		t.Errorf("the drift run's log does not say the state is Strata's:\n%s", logs)
	}

	e.world.Set(t, "a", "changed-by-hand")
	clock.elapse(t, e.Server.Store(), 6*time.Hour)
	driftScan(t, e.Env)
	runs = driftChecks(e.layersEnv, head)
	if len(runs) != 2 || runs[1].Conclusion != "failure" || runs[1].Title != "Drifted: 0 to add, 1 to change, 0 to destroy" ||
		!strings.Contains(runs[1].Summary, "world_thing.a") {
		t.Fatalf("drift checks after the world changed = %+v", runs)
	}
	if vs := e.stateVersions(); len(vs) != 1 || vs[0].ID != applied[0].ID {
		t.Errorf("drift runs wrote the state: %s", describeVersions(vs))
	}
	if l, _ := e.Server.Store().StateLockOf(t.Context(), store.StateKey{Repo: e.Repo.FullName(), Layer: network}); l != nil {
		t.Errorf("a state lock is left: %+v", l)
	}
	noViolations(t, e.GitHub)
}

// A layer with managed state that applies on merge: PR #1 reviewed and
// merged -> the apply at the merge commit writes the first version,
// recorded with the merge commit; PR #2's plan reads it (one thing to add,
// not two), and its merge's apply writes the second version, with its
// merge commit and a higher serial of the same lineage.
func TestManagedStateApplyOnMerge(t *testing.T) {
	e := startProviderLayers(t, apptest.Options{}, map[string][]providertest.Thing{network: nil})
	e.Repo.Commit("main", map[string]string{".strata.yaml": onMergeConfig, network + "/main.tf": e.managedLayer()},
		"Apply infra/network on merge; Strata keeps the state")
	e.Repo.SetPermission("alice", "write")

	a := providertest.Thing{Name: "a", Value: "one"}
	one := e.reviewedFiles("grow", map[string]string{network + "/main.tf": e.managedLayer(a)})
	merged := e.merge(one)
	if apply := e.completed(merged, networkApply); apply.Conclusion != "success" || !strings.Contains(apply.Text, "Resources: 1 added") {
		t.Fatalf("apply after PR 1's merge = %s %q %q", apply.Conclusion, apply.Summary, apply.Text)
	}
	e.WaitIdle(layersWait)
	first := e.stateVersions()
	if len(first) != 1 || first[0].Commit != merged || first[0].PR != one.Number || first[0].Kind != store.StateByRun || first[0].RunID == 0 {
		t.Fatalf("after PR 1's merge: %s, newest commit %q; want one version of the merge commit %s", describeVersions(first), commitOf(first), merged)
	}

	pr := e.openPR("more", "alice", map[string]string{network + "/main.tf": e.managedLayer(a, providertest.Thing{Name: "b", Value: "two"})})
	e.comment(pr.Number, "alice", "/plan")
	if plan := e.completed(pr.HeadSHA(), networkPlan); plan.Title != "1 to add, 0 to change, 0 to destroy" || !strings.Contains(plan.Text, "world_thing.b") {
		t.Fatalf("PR 2's plan = %s %q; want b alone to add: a is in Strata's state", plan.Conclusion, plan.Title)
	}
	e.WaitIdle(layersWait)
	merged2 := e.merge(pr)
	if apply := e.completed(merged2, networkApply); apply.Conclusion != "success" || !strings.Contains(apply.Text, "Resources: 1 added") {
		t.Fatalf("apply after PR 2's merge = %s %q %q", apply.Conclusion, apply.Summary, apply.Text)
	}
	e.WaitIdle(layersWait)
	vs := e.stateVersions()
	if len(vs) != 2 || vs[0].Commit != merged2 || vs[0].PR != pr.Number || vs[0].Serial <= first[0].Serial || vs[0].Lineage != first[0].Lineage {
		t.Fatalf("after PR 2's merge: %s, newest commit %q; want a second version of the merge commit %s", describeVersions(vs), commitOf(vs), merged2)
	}
	if v, ok := e.world.Get(t, "b"); !ok || v != "two" {
		t.Errorf("thing b = %q, %v after the merge", v, ok)
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// commitOf is the newest version's commit, for a failure.
func commitOf(vs []*store.StateVersion) string {
	if len(vs) == 0 {
		return ""
	}
	return vs[0].Commit
}
