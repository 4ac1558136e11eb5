package layers

import (
	"fmt"

	"strata.dev/strata/checks"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
)

// The decisions of the post-merge apply job (merge_run.go), as pure
// functions of what it found: whether a layer runs (mergeStartOf), whether
// the plan at the merge commit is applied (mergePlanOutcomeOf), and how
// the apply ended (mergeApplyOutcomeOf); and, for applyOnMerge, whether a
// layer's lock is held by a merge whose apply is still to end
// (holderMerging).

// holderMerging says whether last, the layer's post-merge apply recorded
// last (nil: none), is the one of holder, the PR holding the layer's lock,
// and is queued or running: it releases the lock when it ends, so a later
// merge's apply comes after it instead of being refused.
func holderMerging(last *store.MergeApply, holder int) bool {
	if last == nil || last.PR != holder {
		return false
	}
	s := mergeState(last.State)
	return s == mergeQueued || s == mergeRunning
}

// mergeOutcome is how one layer's post-merge apply ended: its state, the
// line the PR's comment gives it, its check.
type mergeOutcome struct {
	State  mergeState
	Detail string
	Check  report.Check
}

// mergeStart is what the job does with one layer of its steps.
type mergeStart string

const (
	mergeStartSettled mergeStart = "settled" // an earlier run of this job settled it: left as it is
	mergeStartSkip    mergeStart = "skip"    // a layer it depends on was not applied: skipped
	mergeStartRun     mergeStart = "run"     // its turn, then plan, compare and apply
)

// mergeStartOf decides for a layer whose stored row is row (nil: none)
// and which depends on dependsOn, given the layers of this job not applied
// so far; dep names the first of those it depends on.
func mergeStartOf(row *store.MergeApply, dependsOn []string, notApplied map[string]bool) (start mergeStart, dep string) {
	if row == nil || mergeState(row.State) != mergeQueued {
		return mergeStartSettled, ""
	}
	for _, n := range dependsOn {
		if notApplied[n] {
			return mergeStartSkip, n
		}
	}
	return mergeStartRun, ""
}

// mergePlanRun is what planning a layer at the merge commit found, up to
// the first fact that ends it, in the order it happens (planMerge).
type mergePlanRun struct {
	LockErr error       // taking the layer's lock failed
	Held    *store.Lock // another PR holds the layer's lock
	// Reviewed are the changes of the plan reviewed at the PR's head.
	Reviewed    []terraform.PlannedChange
	ReviewedErr error
	SlotErr     error // the layer's slot was not had: nothing was planned
	Base        store.LayerApplied
	BaseErr     error // the layer's last apply could not be read
	Plan        *terraform.PlanResult
	PlanErr     error
	// Redact masks the plan's sensitive values too (closeLog).
	Redact func(string) string
}

// mergeFail is a layer's outcome in a state that ends it, as mergeCheck
// shows it.
func mergeFail(a jobs.LayerMergeApply, layer string, state mergeState, why string) mergeOutcome {
	return mergeOutcome{State: state, Detail: why, Check: mergeCheck(a.PR, a.HeadSHA, layer, state, why)}
}

// mergePlanOutcomeOf decides what planning the merge commit ends in, or
// apply: the plan makes the reviewed changes, and some.
func mergePlanOutcomeOf(a jobs.LayerMergeApply, layer, logURL string, r mergePlanRun) (out mergeOutcome, apply bool) {
	switch {
	case r.LockErr != nil:
		return mergeFail(a, layer, mergeRefused, "taking the layer's lock failed: "+r.LockErr.Error()), false
	case r.Held != nil:
		return mergeFail(a, layer, mergeRefused, fmt.Sprintf("#%d holds the layer's lock; nothing was applied", r.Held.PR)), false
	case r.ReviewedErr != nil:
		return mergeFail(a, layer, mergeRefused, "the reviewed plan's changes cannot be read ("+r.ReviewedErr.Error()+"); nothing was applied"), false
	case r.SlotErr != nil:
		return mergeFail(a, layer, mergeRefused, "planning the merge commit did not start: "+r.SlotErr.Error()), false
	case r.BaseErr != nil:
		return mergeFail(a, layer, mergeRefused, r.BaseErr.Error()), false
	case r.PlanErr != nil:
		out := mergeFail(a, layer, mergeRefused, "planning the merge commit failed, so nothing was applied: "+report.FirstLine(errorText(r.PlanErr)))
		out.Check.Text, out.Check.LogURL, out.Check.DetailsURL = "", logURL, logURL
		out.Detail = r.Redact(out.Detail)
		out.Check.Summary = r.Redact(out.Check.Summary)
		return out, false
	}
	if diffs := plansEquivalent(r.Reviewed, r.Plan.Changes); len(diffs) > 0 {
		why := fmt.Sprintf("the plan at the merge commit does not make the changes of the plan reviewed at %s, so nothing was applied "+
			"(the world or the default branch changed since the review). Plan the "+
			"default branch in a new pull request to apply what is there now. The differences:\n\n%s", report.Short(a.ReviewedSHA), diffText(diffs))
		out := mergeFail(a, layer, mergeDiffers, r.Redact(why))
		out.Check.Title = "Not applied: the plan differs from the reviewed one"
		out.Check.Text, out.Check.LogURL, out.Check.DetailsURL = markdown.Block("", r.Redact(r.Plan.Text)), logURL, logURL
		return out, false
	}
	if !r.Plan.HasChanges {
		return mergeFail(a, layer, mergeNoChanges, "the plan at the merge commit changes nothing"), false
	}
	return mergeOutcome{}, true
}

// mergeApplyRun is what applying the plan of the merge commit gave
// (applyMerge).
type mergeApplyRun struct {
	SaveErr error // the plan could not be saved: nothing was applied
	Applied *terraform.ApplyResult
	Err     error // the apply failed: the layer may be partly applied
	// Redact masks the apply's sensitive values too.
	Redact func(string) string
}

// mergeApplyOutcomeOf names how applying the merge commit's plan ended. A
// failed apply keeps the lock (mergeFailed), and its check says how to
// recover instead of offering a button (mergeCheck says why).
func mergeApplyOutcomeOf(a jobs.LayerMergeApply, layer, logURL string, r mergeApplyRun) mergeOutcome {
	switch {
	case r.SaveErr != nil:
		return mergeFail(a, layer, mergeRefused, "saving the plan failed: "+r.SaveErr.Error())
	case r.Err != nil:
		msg := r.Redact(report.FirstLine(errorText(r.Err)))
		out := mergeFail(a, layer, mergeFailed, fmt.Sprintf("the apply failed (%s); %s", msg, recoverNote(a.PR, layer)))
		// Terraform's error may quote a value of the layer's secrets: the
		// check says it through the apply's redaction, like its log.
		c := failedCheck(checks.Apply(layer), a.HeadSHA, a.PR, r.Err, logURL, nil)
		c.Summary = r.Redact(c.Summary) + "\n\n" + recoverNote(a.PR, layer)
		out.Check = c
		return out
	}
	out := mergeFail(a, layer, mergeApplied, fmt.Sprintf("applied the plan of the merge commit, which makes the changes reviewed at %s", report.Short(a.ReviewedSHA)))
	out.Check.Summary = fmt.Sprintf("Applied %s at %s after #%d merged: its plan made the changes of the plan reviewed at %s. With %s %s.",
		markdown.Quote(layer), a.HeadSHA, a.PR, a.ReviewedSHA, r.Applied.Engine.Name(), r.Applied.TerraformVersion)
	out.Check.Text, out.Check.LogURL, out.Check.DetailsURL = markdown.Block("", r.Redact(r.Applied.Text)), logURL, logURL
	return out
}
