package layers

import (
	"errors"
	"strings"
	"testing"

	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
)

// A layer of the post-merge apply job runs only when its row is still
// queued and no layer it depends on went unapplied; the first such layer
// is named.
func TestMergeStartOf(t *testing.T) {
	queued := &store.MergeApply{State: "queued"}
	notApplied := map[string]bool{"infra/network": true, "infra/dns": true}
	for _, tc := range []struct {
		name      string
		row       *store.MergeApply
		dependsOn []string
		start     mergeStart
		dep       string
	}{
		{"no row", nil, nil, mergeStartSettled, ""},
		{"applied by an earlier run", &store.MergeApply{State: "applied"}, nil, mergeStartSettled, ""},
		{"running when an earlier run died", &store.MergeApply{State: "running"}, []string{"infra/network"}, mergeStartSettled, ""},
		{"queued, no dependencies", queued, nil, mergeStartRun, ""},
		{"queued, its dependency applied", queued, []string{"infra/base"}, mergeStartRun, ""},
		{"queued, a dependency not applied", queued, []string{"infra/base", "infra/dns", "infra/network"}, mergeStartSkip, "infra/dns"},
	} {
		start, dep := mergeStartOf(tc.row, tc.dependsOn, notApplied)
		if start != tc.start || dep != tc.dep {
			t.Errorf("%s: %q %q, want %q %q", tc.name, start, dep, tc.start, tc.dep)
		}
	}
}

// A merge finds a layer locked by an earlier merge whose apply is still
// queued or running: it comes after it rather than being refused.
func TestHolderMerging(t *testing.T) {
	for _, tc := range []struct {
		name   string
		last   *store.MergeApply
		holder int
		want   bool
	}{
		{"no apply recorded", nil, 4, false},
		{"the holder's, queued", &store.MergeApply{PR: 4, State: "queued"}, 4, true},
		{"the holder's, running", &store.MergeApply{PR: 4, State: "running"}, 4, true},
		{"the holder's, failed", &store.MergeApply{PR: 4, State: "failed"}, 4, false},
		{"the holder's, applied", &store.MergeApply{PR: 4, State: "applied"}, 4, false},
		{"another PR's, running", &store.MergeApply{PR: 5, State: "running"}, 4, false},
		{"no lock", &store.MergeApply{PR: 4, State: "queued"}, 0, false},
	} {
		if got := holderMerging(tc.last, tc.holder); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// mask stands for the reporter's redaction of a plan's sensitive value.
func mask(s string) string { return strings.ReplaceAll(s, "hunter2", "***") }

// What planning the merge commit ends in, for each fact that ends it, and
// when the plan is applied.
func TestMergePlanOutcomeOf(t *testing.T) {
	a := jobs.LayerMergeApply{PR: 3, HeadSHA: "m3rge0000", ReviewedSHA: "r3v1ew000", User: "alice"}
	create := []terraform.PlannedChange{{Address: "terraform_data.a", Actions: []string{"create"}}}
	update := []terraform.PlannedChange{{Address: "terraform_data.a", Actions: []string{"update"}}}
	for _, tc := range []struct {
		name, detail, title, conclusion string
		run                             mergePlanRun
		state                           mergeState
		apply                           bool
		logged                          bool // the check links to the run's log
	}{
		{name: "the lock could not be taken", run: mergePlanRun{LockErr: errors.New("database is locked")},
			state: mergeRefused, detail: "taking the layer's lock failed: database is locked", title: "Not applied", conclusion: "failure"},
		{name: "another PR holds the lock", run: mergePlanRun{Held: &store.Lock{PR: 9}},
			state: mergeRefused, detail: "#9 holds the layer's lock; nothing was applied", title: "Not applied", conclusion: "failure"},
		{name: "no reviewed changes", run: mergePlanRun{ReviewedErr: store.ErrNotFound},
			state: mergeRefused, detail: "the reviewed plan's changes cannot be read (" + store.ErrNotFound.Error() + "); nothing was applied", title: "Not applied", conclusion: "failure"},
		{name: "no slot", run: mergePlanRun{Reviewed: create, SlotErr: errors.New("context canceled")},
			state: mergeRefused, detail: "planning the merge commit did not start: context canceled", title: "Not applied", conclusion: "failure"},
		{name: "the last apply unread", run: mergePlanRun{Reviewed: create, BaseErr: errors.New("disk I/O error")},
			state: mergeRefused, detail: "disk I/O error", title: "Not applied", conclusion: "failure"},
		{name: "the plan failed", run: mergePlanRun{Reviewed: create, PlanErr: errors.New("init: password hunter2 refused\nmore"), Redact: mask},
			state: mergeRefused, detail: "planning the merge commit failed, so nothing was applied: init: password *** refused", title: "Not applied", conclusion: "failure", logged: true},
		{name: "the plan differs", run: mergePlanRun{Reviewed: create, Plan: &terraform.PlanResult{Changes: update, HasChanges: true}, Redact: mask},
			state: mergeDiffers, detail: "the plan at the merge commit does not make the changes of the plan reviewed at r3v1ew0, so nothing was applied " +
				"(the world or the default branch changed since the review). Plan the default branch in a new pull request to apply what is there now. " +
				"The differences:\n\n- `terraform_data.a`: reviewed create, now update\n",
			title: "Not applied: the plan differs from the reviewed one", conclusion: "failure", logged: true},
		{name: "nothing to apply", run: mergePlanRun{Plan: &terraform.PlanResult{}, Redact: mask},
			state: mergeNoChanges, detail: "the plan at the merge commit changes nothing", title: "No changes", conclusion: "success"},
		{name: "the reviewed plan", run: mergePlanRun{Reviewed: create, Plan: &terraform.PlanResult{Changes: create, HasChanges: true}, Redact: mask}, apply: true},
	} {
		out, apply := mergePlanOutcomeOf(a, "infra/network", "https://strata/runs/7", tc.run)
		c := out.Check
		if apply != tc.apply || out.State != tc.state || out.Detail != tc.detail || c.Title != tc.title || c.Conclusion != tc.conclusion {
			t.Errorf("%s: apply %v, %q %q, check %q %q; want apply %v, %q %q, check %q %q", tc.name, apply, out.State, out.Detail, c.Title, c.Conclusion,
				tc.apply, tc.state, tc.detail, tc.title, tc.conclusion)
		}
		if logged := c.LogURL == "https://strata/runs/7"; logged != tc.logged {
			t.Errorf("%s: check links the log: %v, want %v", tc.name, logged, tc.logged)
		}
		if strings.Contains(c.Summary, "hunter2") || strings.Contains(out.Detail, "hunter2") {
			t.Errorf("%s: a sensitive value is shown: %q", tc.name, c.Summary)
		}
	}
}

// How applying the merge commit's plan ends: a failed apply keeps the lock
// and says how to recover, without a button.
func TestMergeApplyOutcomeOf(t *testing.T) {
	a := jobs.LayerMergeApply{PR: 3, HeadSHA: "m3rge0000", ReviewedSHA: "r3v1ew000", User: "alice"}
	recover := "the layer may be partly applied, so #3 keeps its lock and no other pull request plans or applies it. " +
		"Read the run's log and fix the cause (in a new pull request if the code is at fault), then release the lock with " +
		"`/unlock infra/network` on #3 (or the Unlock button of `strata/lock: infra/network`)"
	for _, tc := range []struct {
		name, detail, title, conclusion, summary string
		run                                      mergeApplyRun
		state                                    mergeState
	}{
		{"the plan was not saved", "saving the plan failed: database is locked", "Not applied", "failure",
			"`infra/network` was not applied after #3 merged: saving the plan failed: database is locked.",
			mergeApplyRun{SaveErr: errors.New("database is locked")}, mergeRefused},
		// The error quotes a secret of the layer: the check masks it too.
		{"the apply failed", "the apply failed (provider: password *** refused); " + recover, "Failed", "failure",
			"```\nprovider: password *** refused\n```\n\n\n" + recover,
			mergeApplyRun{Err: errors.New("provider: password hunter2 refused"), Redact: mask}, mergeFailed},
		{"applied", "applied the plan of the merge commit, which makes the changes reviewed at r3v1ew0", "Applied", "success",
			"Applied `infra/network` at m3rge0000 after #3 merged: its plan made the changes of the plan reviewed at r3v1ew000. With Terraform 1.9.8.",
			mergeApplyRun{Applied: &terraform.ApplyResult{Text: "Apply complete!", TerraformVersion: "1.9.8"}, Redact: mask}, mergeApplied},
	} {
		out := mergeApplyOutcomeOf(a, "infra/network", "https://strata/runs/7", tc.run)
		c := out.Check
		if out.State != tc.state || out.Detail != tc.detail || c.Title != tc.title || c.Conclusion != tc.conclusion || c.Summary != tc.summary {
			t.Errorf("%s: %q %q, check %q %q %q; want %q %q, check %q %q %q", tc.name, out.State, out.Detail, c.Title, c.Conclusion, c.Summary,
				tc.state, tc.detail, tc.title, tc.conclusion, tc.summary)
		}
		if len(c.Actions) != 0 {
			t.Errorf("%s: buttons %v, want none", tc.name, c.Actions)
		}
	}
}
