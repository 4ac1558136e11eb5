package e2e

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform/testprovider/providertest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
)

// onMergeConfig makes infra/network apply on merge.
const onMergeConfig = "version: 1\nlayers:\n  - dir: infra/network\n    auto_apply: on_merge\n"

// startOnMerge starts Strata on a layer of the test provider that applies
// on merge, with the given .strata.yaml, and alice may write.
func startOnMerge(t *testing.T, strataYAML string) *providerEnv {
	t.Helper()
	return startOnMergeWith(t, apptest.Options{}, strataYAML)
}

func startOnMergeWith(t *testing.T, opts apptest.Options, strataYAML string) *providerEnv {
	t.Helper()
	e := startProviderLayers(t, opts, map[string][]providertest.Thing{network: nil})
	e.Repo.Commit("main", map[string]string{".strata.yaml": strataYAML}, "Apply infra/network on merge")
	e.Repo.SetPermission("alice", "write")
	return e
}

// reviewed opens a PR setting the layer's things and plans it.
func (p *providerEnv) reviewed(branch string, things ...providertest.Thing) *githubtest.PR {
	p.t.Helper()
	return p.reviewedFiles(branch, map[string]string{network + "/main.tf": p.layer(network, things...)})
}

// reviewedFiles opens a PR changing files and plans it.
func (p *providerEnv) reviewedFiles(branch string, files map[string]string) *githubtest.PR {
	p.t.Helper()
	pr := p.openPR(branch, "alice", files)
	p.comment(pr.Number, "alice", "/plan")
	if plan := p.completed(pr.HeadSHA(), networkPlan); plan.Conclusion != "success" {
		p.t.Fatalf("plan of #%d = %s %q", pr.Number, plan.Conclusion, plan.Summary)
	}
	// The check shows the plan from its text; the plan's JSON (its changes,
	// kept for the merge) follows.
	p.WaitIdle(layersWait)
	return pr
}

// thingFile is a .tf file of one thing, beside the layer's main.tf.
func thingFile(name string, delayMS int) string {
	return fmt.Sprintf("resource \"world_thing\" %q {\n  name  = %q\n  value = %q\n  apply_delay_ms = %d\n}\n", name, name, name, delayMS)
}

// merge merges the PR and delivers its close; it returns the merge commit.
func (p *providerEnv) merge(pr *githubtest.PR) string {
	p.Repo.ClosePR(pr.Number, true)
	p.Deliver(p.Repo.PullRequestEvent("closed", pr.Number))
	return p.Repo.Branch("main")
}

func (p *providerEnv) lockHolder() int {
	p.t.Helper()
	l, err := p.Server.Store().Lock(p.t.Context(), p.Repo.FullName(), network)
	if errors.Is(err, store.ErrNotFound) {
		return 0
	}
	if err != nil {
		p.t.Fatal(err)
	}
	return l.PR
}

// A PR planned and merged -> Strata plans the merge commit, finds it makes
// the reviewed changes and applies it: the things exist, the apply check
// on the merge commit passes, the lock is released, the PR is told.
// Then the real world changes behind Terraform between a second PR's
// review and its merge -> the plan at the merge commit has a change nobody
// reviewed: nothing is applied, the check fails with Re-plan and names the
// address, and the PR's comment says why.
func TestMergeAppliesOnlyTheReviewedPlan(t *testing.T) {
	e := startOnMerge(t, onMergeConfig)
	one := e.reviewed("grow", providertest.Thing{Name: "a", Value: "one"}, providertest.Thing{Name: "b", Value: "two"})
	if e.lockHolder() != one.Number {
		t.Fatalf("the plan did not take the lock")
	}
	merged := e.merge(one)
	apply := e.completed(merged, networkApply)
	if apply.Conclusion != "success" || !strings.Contains(apply.Text, "Apply complete! Resources: 2 added") {
		t.Fatalf("apply after merge = %s %q %q %q", apply.Conclusion, apply.Title, apply.Summary, apply.Text)
	}
	if v, ok := e.world.Get(t, "a"); !ok || v != "one" {
		t.Fatalf("thing a = %q, %v after the merge", v, ok)
	}
	e.commentWith(one.Number, "✅ `infra/network`: applied the plan of the merge commit")
	e.WaitIdle(layersWait)
	if h := e.lockHolder(); h != 0 {
		t.Fatalf("the lock is still held by #%d after the apply", h)
	}

	two := e.reviewed("change-a", providertest.Thing{Name: "a", Value: "three"}, providertest.Thing{Name: "b", Value: "two"})
	e.world.Set(t, "b", "changed-by-hand")
	merged = e.merge(two)
	refused := e.completed(merged, networkApply)
	if refused.Conclusion != "failure" || !strings.Contains(refused.Summary, "does not make the changes of the plan reviewed") ||
		!strings.Contains(refused.Summary, "`world_thing.b`: reviewed no change, now update") || len(refused.Actions) > 0 {
		t.Fatalf("apply after a merge whose plan differs = %s %q %q %v", refused.Conclusion, refused.Title, refused.Summary, actionIDs(refused))
	}
	if v, _ := e.world.Get(t, "a"); v != "one" {
		t.Fatalf("thing a = %q: a plan that differs from the reviewed one was applied", v)
	}
	c := e.commentWith(two.Number, "**Terraform apply after merge**")
	if !strings.Contains(c.Body, "❌ `infra/network`") || !strings.Contains(c.Body, "world_thing.b") {
		t.Fatalf("comment = %q", c.Body)
	}
	e.WaitIdle(layersWait)
	if h := e.lockHolder(); h != 0 {
		t.Fatalf("nothing was applied, yet #%d keeps the lock", h)
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// A PR merged without a plan of its head -> nothing applied, and it says so.
// A PR whose apply fails after the merge -> the check fails and says how to
// recover, and the PR keeps the lock: another PR cannot plan the layer.
func TestMergeWithoutPlanAndFailedApply(t *testing.T) {
	e := startOnMerge(t, onMergeConfig)
	unplanned := e.openPR("unplanned", "alice", map[string]string{network + "/main.tf": e.layer(network, providertest.Thing{Name: "a", Value: "one"})})
	merged := e.merge(unplanned)
	if cr := e.completed(merged, networkApply); cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "merged without a plan of its head") {
		t.Fatalf("apply check of a merge without a plan = %s %q", cr.Conclusion, cr.Summary)
	}
	e.commentWith(unplanned.Number, "nothing was reviewed to apply")
	if names := e.world.Names(t); len(names) != 0 {
		t.Fatalf("a merge without a reviewed plan changed the world: %v", names)
	}

	failing := e.reviewed("failing", providertest.Thing{Name: "a", Value: "one"}, providertest.Thing{Name: "bad", Value: "x", FailOnApply: true})
	merged = e.merge(failing)
	cr := e.completed(merged, networkApply)
	if cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "keeps its lock") || !strings.Contains(cr.Summary, "/unlock infra/network") {
		t.Fatalf("failed apply after merge = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	e.commentWith(failing.Number, "the apply failed")
	e.WaitIdle(layersWait)
	if h := e.lockHolder(); h != failing.Number {
		t.Fatalf("lock holder after a failed apply = #%d, want #%d", h, failing.Number)
	}
	other := e.openPR("other", "alice", map[string]string{network + "/main.tf": e.layer(network, providertest.Thing{Name: "c", Value: "c"})})
	e.comment(other.Number, "alice", "/plan")
	if blocked := e.completed(other.HeadSHA(), networkPlan); blocked.Conclusion != "failure" || !strings.Contains(blocked.Title, "Locked by #") {
		t.Fatalf("plan of another PR after a failed apply = %s %q", blocked.Conclusion, blocked.Title)
	}
	noViolations(t, e.GitHub)
}

// lock: on_apply: two PRs planned side by side, merged one after the
// other; the first's close is held at its first GitHub call, so the
// second's close records its apply first (the race of close jobs that run
// side by side) -> the second's apply waits for the first's merge, which is
// in its history, then plans its merge commit with the first's changes
// applied and applies only its own: both applied, in merge order. On the
// code before, the second applied first, its plan held the first's
// unapplied change, and it was refused.
func TestMergesApplyInMergeOrder(t *testing.T) {
	e := startOnMergeWith(t, apptest.Options{}, "version: 1\nlock: on_apply\nlayers:\n  - dir: infra/network\n    auto_apply: on_merge\n")
	one := e.reviewedFiles("one", map[string]string{network + "/c.tf": thingFile("c", 0)})
	two := e.reviewedFiles("two", map[string]string{network + "/d.tf": thingFile("d", 0)})
	held := e.GitHub.HoldNext("GET", fmt.Sprintf("/repos/%s/pulls/%d", e.Repo.FullName(), one.Number))
	first := e.merge(one)
	select {
	case <-held.Reached():
	case <-time.After(layersWait):
		t.Fatal("the first merge's close job never read its PR")
	}
	second := e.merge(two)
	st := e.Server.Store()
	// The second's apply is recorded and has started (it waits, or, on the
	// code before, went ahead) while the first's close is still held.
	e.WaitFor(layersWait, func() bool {
		rows, _ := st.MergeAppliesOfPR(t.Context(), e.Repo.FullName(), two.Number)
		if len(rows) != 1 {
			return false
		}
		var running int
		err := st.DB().QueryRowContext(t.Context(), `SELECT count(*) FROM river_job WHERE kind = 'layer_merge_apply' AND state = 'running'`).Scan(&running)
		return err == nil && (running > 0 || rows[0].State != "queued")
	})
	if rows, _ := st.MergeAppliesOfPR(t.Context(), e.Repo.FullName(), one.Number); len(rows) != 0 {
		t.Fatalf("the held close recorded %+v", rows)
	}
	held.Release()
	for _, sha := range []string{first, second} {
		if cr := e.completed(sha, networkApply); cr.Conclusion != "success" {
			t.Fatalf("apply after merge at %s = %s %q %q", sha, cr.Conclusion, cr.Title, cr.Summary)
		}
	}
	for _, name := range []string{"c", "d"} {
		if _, ok := e.world.Get(t, name); !ok {
			t.Fatalf("thing %s missing after both merges", name)
		}
	}
	a, _ := st.MergeAppliesOfPR(t.Context(), e.Repo.FullName(), one.Number)
	b, _ := st.MergeAppliesOfPR(t.Context(), e.Repo.FullName(), two.Number)
	if len(a) != 1 || len(b) != 1 || a[0].State != "applied" || b[0].State != "applied" || !a[0].UpdatedAt.Before(b[0].UpdatedAt) {
		t.Fatalf("post-merge applies = %+v, %+v", a, b)
	}
	if last, err := st.LastApply(t.Context(), e.Repo.FullName(), network); err != nil || last.PR != two.Number || last.Generation != 2 {
		t.Fatalf("last apply = %+v, %v", last, err)
	}
	e.WaitIdle(layersWait)
	if h := e.lockHolder(); h != 0 {
		t.Fatalf("lock held by #%d after both applies", h)
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, st)
}
