package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/hydrate/hydratetest"
	"strata.dev/strata/githubtest"
)

// The attack: a fork's author, who can only read, comments /plan on their
// own PR, whose layer would read the server's environment. Nothing runs:
// the reply names the permission needed, no plan check appears, no lock is
// taken. Then a maintainer who read the change comments /plan: it runs.
func TestForkAuthorCannotPlanButAMaintainerCan(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("mallory", "read")
	e.Repo.SetPermission("maintainer", "maintain")
	fork := e.GitHub.AddFork(e.Repo, "mallory")
	evil := e.layerFile(network, 2) + "\noutput \"env\" {\n  value = base64encode(file(\"/proc/self/environ\"))\n}\n"
	fork.Commit("evil", map[string]string{network + "/main.tf": evil}, "Change")
	pr := e.Repo.OpenPR("mallory:evil", "main", "mallory")

	e.comment(pr.Number, "mallory", "/plan")
	c := e.commentWith(pr.Number, "refused")
	wantText(t, "refusal", c.Body, "@mallory has read permission", "`/plan` needs write or higher")
	e.WaitIdle(layersWait)
	if runs := e.checksNamed(pr.HeadSHA(), networkPlan); len(runs) != 0 {
		t.Fatalf("the fork's author got a plan: %+v", runs)
	}
	if locks, err := e.Server.Store().LocksOfPR(t.Context(), e.Repo.FullName(), pr.Number); err != nil || len(locks) != 0 {
		t.Fatalf("the fork's author took locks: %v %v", locks, err)
	}
	e.comment(pr.Number, "maintainer", "/plan")
	// It runs, sandboxed: the layer's read of the environment is refused.
	if cr := e.completed(pr.HeadSHA(), networkPlan); cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "/proc/self/environ: permission") {
		t.Fatalf("maintainer's plan of the fork = %s %q, want it run and the read refused:\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	noViolations(t, e.GitHub)
}

// A reader cannot release another PR's lock (and discard its plan) with
// /unlock or the Unlock button on the lock check.
func TestReaderCannotUnlock(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("reader", "read")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	e.comment(pr.Number, "alice", "/plan")
	e.completed(pr.HeadSHA(), networkPlan)

	e.comment(pr.Number, "reader", "/unlock")
	c := e.commentWith(pr.Number, "`/unlock` needs write")
	wantText(t, "refusal", c.Body, "@reader has read permission")
	lock, _ := e.Repo.CheckRun(pr.HeadSHA(), networkLock)
	e.Deliver(e.Repo.CheckRunEvent("requested_action", lock.ID, "unlock", "reader"))
	e.WaitIdle(layersWait)
	if l, err := e.Server.Store().Lock(t.Context(), e.Repo.FullName(), network); err != nil || l.PR != pr.Number {
		t.Fatalf("after a reader's /unlock and Unlock button the lock is %+v, %v", l, err)
	}
	if n := strings.Count(allComments(e.Repo, pr.Number), "needs write or higher"); n != 2 {
		t.Errorf("%d refusals, want one for the comment and one for the button", n)
	}
	noViolations(t, e.GitHub)
}

func allComments(r *githubtest.Repo, pr int) string {
	var b strings.Builder
	for _, c := range r.Comments(pr) {
		b.WriteString(c.Body + "\n")
	}
	return b.String()
}

// `approved` means something: a reader's approval does not count, nor an
// approval of an earlier head; each refusal names why, and a writer's
// approval of the head applies.
func TestApprovalCountsOnlyFromAWriterOfTheHead(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, map[string]string{".strata.yaml": requirementsYAML})
	e.Repo.SetPermission("bob", "write")
	e.Repo.SetPermission("rita", "read")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	const check = "strata/apply: network"
	e.comment(pr.Number, "alice", "/plan network")
	e.completed(pr.HeadSHA(), "strata/plan: network")

	e.Repo.AddReview(pr.Number, "rita", "APPROVED")
	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 1, pr.HeadSHA(), check, "@rita has read permission, so their approval does not count")

	// bob approves, then the branch moves on: his approval is of the old head.
	e.Repo.AddReview(pr.Number, "bob", "APPROVED")
	old := pr.HeadSHA()
	e.Repo.Commit("grow", map[string]string{network + "/extra.tf": "# more\n"}, "More")
	e.Deliver(e.Repo.PullRequestEvent("synchronize", pr.Number))
	e.completed(pr.HeadSHA(), "strata/plan: network")
	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 2, pr.HeadSHA(), check, "@bob approved "+old[:7]+", not the head "+pr.HeadSHA()[:7])

	e.Repo.AddReview(pr.Number, "bob", "APPROVED")
	e.comment(pr.Number, "alice", "/apply network")
	// The refusal above is the head's first apply check; wait for the second.
	e.WaitFor(layersWait, func() bool {
		runs := e.checksNamed(pr.HeadSHA(), check)
		return len(runs) == 2 && runs[1].Status == "completed"
	})
	if cr := e.checksNamed(pr.HeadSHA(), check)[1]; cr.Conclusion != "success" {
		t.Fatalf("apply after bob approved the head = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	noViolations(t, e.GitHub)
}

// The attack: a fork changes a sync's source; nothing of it is built on its
// own (kustomize reads the fork's files only when someone asks), so no
// preview runs, while the same change from a branch of the repository is
// previewed.
func TestForkPRsAreNotPreviewed(t *testing.T) {
	e := startSyncs(t, apptest.Options{}, nil)
	e.completed(e.push(map[string]string{"docs/README.md": "x\n"}, "First"), devHydrate)
	change := map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(7)}

	fork := e.GitHub.AddFork(e.Repo, "mallory")
	fork.Commit("evil", change, "Evil")
	fpr := e.Repo.OpenPR("mallory:evil", "main", "mallory")
	e.Deliver(e.Repo.PullRequestEvent("opened", fpr.Number))
	e.WaitIdle(syncsWait)
	if cr, ok := e.Repo.CheckRun(fpr.HeadSHA(), devHydrate); ok {
		t.Fatalf("a fork's PR was previewed: %+v", cr)
	}

	e.Repo.Commit("scale", change, "Scale")
	pr := e.Repo.OpenPR("scale", "main", "alice")
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	if cr := e.completed(pr.HeadSHA(), devHydrate); cr.Conclusion != "success" {
		t.Fatalf("preview of a branch of the repository = %s %q", cr.Conclusion, cr.Title)
	}
	noViolations(t, e.GitHub)
}
