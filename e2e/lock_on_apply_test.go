package e2e

import (
	"slices"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
)

// onApplyConfig makes infra/network lock on apply, on the default branch.
const onApplyConfig = "version: 1\nlayers:\n  - dir: infra/network\n    lock: on_apply\n"

// lock: on_apply. #1 and #2 plan the layer at once and neither is blocked;
// #1 applies -> #1 holds the lock, #2's plan is marked stale and its /apply
// is refused naming #1; #2 re-plans -> blocked by #1; #1 is merged -> the
// lock is released, #2 re-plans and applies, taking the lock.
func TestLockOnApply(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, map[string]string{".strata.yaml": onApplyConfig})
	e.Repo.SetPermission("alice", "write")
	e.Repo.SetPermission("bob", "write")
	// #1 also tries to switch the layer to on_plan in its own file (to take
	// the lock with its plan): policy comes from the default branch only.
	one := e.openPR("one", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2),
		".strata.yaml": strings.Replace(onApplyConfig, "on_apply", "on_plan", 1)})
	two := e.openPR("two", "bob", map[string]string{network + "/main.tf": e.layerFile(network, 3)})

	e.comment(one.Number, "alice", "/plan infra/network")
	e.comment(two.Number, "bob", "/plan infra/network")
	for _, pr := range []struct{ head, title string }{{one.HeadSHA(), "2 to add"}, {two.HeadSHA(), "3 to add"}} {
		if cr := e.completed(pr.head, networkPlan); cr.Conclusion != "success" || !strings.HasPrefix(cr.Title, pr.title) ||
			!strings.Contains(cr.Summary, "lock: on_apply") {
			t.Fatalf("plan check on %s = %s %q %q, want success, %s", pr.head, cr.Conclusion, cr.Title, cr.Summary, pr.title)
		}
	}
	e.WaitIdle(layersWait)
	for _, head := range []string{one.HeadSHA(), two.HeadSHA()} {
		if lock, ok := e.Repo.CheckRun(head, networkLock); ok {
			t.Errorf("a plan took the lock of an on_apply layer: %+v", lock)
		}
	}

	// #1 applies: the lock is #1's, and #2's plan is stale.
	e.comment(one.Number, "alice", "/apply")
	if cr := e.completed(one.HeadSHA(), networkApply); cr.Conclusion != "success" {
		t.Fatalf("apply of #1 = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	if lock, _ := e.Repo.CheckRun(one.HeadSHA(), networkLock); lock.Title != "Locked by #1" || lock.Status != "in_progress" ||
		!strings.Contains(lock.Summary, "@alice") {
		t.Errorf("lock check of #1 = %+v", lock)
	}
	var stale githubtest.CheckRun
	e.WaitFor(layersWait, func() bool {
		stale, _ = e.Repo.CheckRun(two.HeadSHA(), networkPlan)
		return stale.Title == "Stale: #1 applied this layer"
	})
	if stale.Conclusion != "failure" || !slices.Equal(actionIDs(stale), []string{"plan"}) ||
		!strings.Contains(stale.Summary, "#1 holds the layer's lock until it is merged or closed") {
		t.Errorf("stale plan check of #2 = %s %v %q", stale.Conclusion, actionIDs(stale), stale.Summary)
	}

	// #2's /apply is refused: locked by #1, and its plan is stale.
	e.comment(two.Number, "bob", "/apply")
	refusal := e.commentWith(two.Number, "`/apply` refused")
	for _, want := range []string{"locked by #1", "stale", "`/plan infra/network`"} {
		if !strings.Contains(refusal.Body, want) {
			t.Errorf("refusal %q does not say %q", refusal.Body, want)
		}
	}
	if cr := e.completed(two.HeadSHA(), networkApply); cr.Conclusion != "failure" || cr.Title != "Apply refused" {
		t.Errorf("apply check of #2 = %s %q", cr.Conclusion, cr.Title)
	}

	// #2 re-plans with the button: blocked by #1's apply, nothing planned.
	e.Deliver(e.Repo.CheckRunEvent("requested_action", stale.ID, "plan", "bob"))
	var blocked githubtest.CheckRun
	e.WaitFor(layersWait, func() bool {
		blocked, _ = e.Repo.CheckRun(two.HeadSHA(), networkPlan)
		return blocked.ID != stale.ID && blocked.Status == "completed"
	})
	if blocked.Conclusion != "failure" || blocked.Title != "Locked by #1" || !strings.Contains(blocked.Summary, "#1 holds the lock until it is merged or closed") {
		t.Fatalf("re-plan of #2 while #1 holds the lock = %s %q %q", blocked.Conclusion, blocked.Title, blocked.Summary)
	}

	// #1 is merged: the lock is released; #2 plans and applies, and holds it.
	e.Repo.ClosePR(one.Number, true)
	e.Deliver(e.Repo.PullRequestEvent("closed", one.Number))
	if released := e.completed(one.HeadSHA(), networkLock); released.Title != "Lock released" {
		t.Fatalf("lock check of #1 after the merge = %+v", released)
	}
	e.comment(two.Number, "bob", "/plan infra/network")
	var replanned githubtest.CheckRun
	e.WaitFor(layersWait, func() bool {
		replanned, _ = e.Repo.CheckRun(two.HeadSHA(), networkPlan)
		return replanned.ID != blocked.ID && replanned.Status == "completed"
	})
	// #1's two resources are real now: #2 adds one more.
	if replanned.Conclusion != "success" || !strings.HasPrefix(replanned.Title, "1 to add") {
		t.Fatalf("plan of #2 after the merge = %s %q", replanned.Conclusion, replanned.Title)
	}
	applied := len(e.checksNamed(two.HeadSHA(), networkApply))
	e.comment(two.Number, "bob", "/apply")
	e.WaitFor(layersWait, func() bool {
		runs := e.checksNamed(two.HeadSHA(), networkApply)
		return len(runs) > applied && runs[len(runs)-1].Status == "completed"
	})
	if cr, _ := e.Repo.CheckRun(two.HeadSHA(), networkApply); cr.Conclusion != "success" {
		t.Fatalf("apply of #2 = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	if lock, _ := e.Repo.CheckRun(two.HeadSHA(), networkLock); lock.Title != "Locked by #2" || lock.Status != "in_progress" {
		t.Errorf("lock check of #2 = %+v", lock)
	}
	noViolations(t, e.GitHub)
}

// A PR cannot switch an on_plan layer to on_apply in its own .strata.yaml
// (to plan it without taking the lock, leaving others free to plan and
// apply it under its plan): the mode is the default branch's, so its plan
// takes the lock, and the next PR's plan is blocked.
func TestLockOnApplyIsPolicy(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, map[string]string{
		".strata.yaml": strings.Replace(onApplyConfig, "    lock: on_apply\n", "", 1)})
	one := e.openPR("one", "mallory", map[string]string{network + "/main.tf": e.layerFile(network, 3), ".strata.yaml": onApplyConfig})
	e.comment(one.Number, "mallory", "/plan infra/network")
	if cr := e.completed(one.HeadSHA(), networkPlan); cr.Conclusion != "success" || strings.Contains(cr.Summary, "on_apply") {
		t.Fatalf("plan of #1 = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	if lock, _ := e.Repo.CheckRun(one.HeadSHA(), networkLock); lock.Title != "Locked by #1" {
		t.Fatalf("#1's plan took no lock: %+v", lock)
	}

	two := e.openPR("two", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	e.comment(two.Number, "alice", "/plan infra/network")
	if cr := e.completed(two.HeadSHA(), networkPlan); cr.Conclusion != "failure" || cr.Title != "Locked by #1" ||
		strings.Contains(cr.Summary, "on_apply") {
		t.Fatalf("plan of #2 = %s %q %q, want blocked by #1's plan", cr.Conclusion, cr.Title, cr.Summary)
	}
	noViolations(t, e.GitHub)
}
