package e2e

import (
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
)

// PR #1 plans a slow layer (3000 resources); while Terraform plans it,
// alice comments /cancel -> Terraform exits, the plan check completes as
// cancelled naming alice, the reply lists the layer, the PR keeps the
// lock, and a later /plan plans it. A reader's /cancel is refused by the
// permission table.
func TestCancelStopsARunningPlan(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("alice", "write")
	e.Repo.SetPermission("reader", "read")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 3000)})
	head := pr.HeadSHA()

	e.comment(pr.Number, "reader", "/cancel")
	refusal := e.commentWith(pr.Number, "refused")
	wantText(t, "refusal", refusal.Body, "@reader has read permission", "`/cancel` needs write or higher")

	cancelWhilePlanning(t, e, pr.Number)
	cr := e.completed(head, networkPlan)
	if cr.Conclusion != "cancelled" || !strings.Contains(cr.Summary, "@alice cancelled it with `/cancel`") {
		t.Fatalf("plan check after /cancel = %s %q %q; want cancelled by @alice (did the plan finish first?)", cr.Conclusion, cr.Title, cr.Summary)
	}
	reply := e.commentWith(pr.Number, "@alice cancelled")
	wantText(t, "reply", reply.Body, "- `"+network+"`", "The locks stay")
	e.WaitIdle(layersWait)
	if l, err := e.Server.Store().Lock(t.Context(), e.Repo.FullName(), network); err != nil || l.PR != pr.Number {
		t.Fatalf("after /cancel the lock is %+v, %v; want #%d's", l, err, pr.Number)
	}

	e.comment(pr.Number, "alice", "/plan")
	e.WaitFor(layersWait, func() bool {
		runs := e.checksNamed(head, networkPlan)
		return len(runs) == 2 && runs[1].Status == "completed"
	})
	if again := e.checksNamed(head, networkPlan)[1]; again.Conclusion != "success" || again.Title != "3000 to add, 0 to change, 0 to destroy" {
		t.Fatalf("plan after /cancel = %s %q %q", again.Conclusion, again.Title, again.Summary)
	}
	if first := e.checksNamed(head, networkPlan)[0]; first.Conclusion != "cancelled" {
		t.Errorf("the cancelled check became %s", first.Conclusion)
	}

	// Nothing is left to cancel.
	e.comment(pr.Number, "alice", "/cancel")
	e.commentWith(pr.Number, "no queued or running plan to cancel")
	e.WaitIdle(layersWait)
	if n := strings.Count(allComments(e.Repo, pr.Number), "cancelled the queued and running plan"); n != 1 {
		t.Errorf("%d replies cancelling plans, want only the first:\n%s", n, allComments(e.Repo, pr.Number))
	}
	noViolations(t, e.GitHub)
}

// With one worker (STRATA_WORKERS=1) busy planning, alice's /cancel is
// still answered and stops the plan: commands have workers of their own.
// With one queue for every job, the /cancel waited for the plan to end.
func TestCancelIsNotQueuedBehindTheRunItCancels(t *testing.T) {
	e := startLayers(t, apptest.Options{Workers: 1}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 3000)})

	cancelWhilePlanning(t, e, pr.Number)
	if cr := e.completed(pr.HeadSHA(), networkPlan); cr.Conclusion != "cancelled" {
		t.Fatalf("plan check after /cancel = %s %q; want cancelled (the /cancel waited for the plan's worker?)", cr.Conclusion, cr.Title)
	}
	e.commentWith(pr.Number, "@alice cancelled")
	noViolations(t, e.GitHub)
}

// cancelWhilePlanning: alice comments /plan on PR pr and, once Terraform
// plans, /cancel; Terraform must exit within layersWait.
func cancelWhilePlanning(t *testing.T, e *layersEnv, pr int) {
	t.Helper()
	e.comment(pr, "alice", "/plan")
	var pid int
	e.WaitFor(layersWait, func() bool { pid = terraformBelow(e.Config.DataDir, "plan"); return pid != 0 })
	exited := watchExit(t, pid)
	e.comment(pr, "alice", "/cancel")
	select {
	case <-exited:
	case <-time.After(layersWait):
		t.Fatal("Terraform goes on planning after /cancel")
	}
}
