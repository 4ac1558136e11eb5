package layers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/queue"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// layerMergeApplyWorker runs a merged PR's post-merge applies, layer after
// layer in dependency order. Each layer waits for the post-merge applies of
// the PRs merged before (merge_applies, in the store: across replicas and
// restarts; before is Git's order, mergeTurn), then plans the merge commit holding the layer's slot, compares
// that plan with the reviewed one (plansEquivalent) and, when they make the
// same changes, applies it through the normal apply path (applyLayer: the
// lock, the slot, the layer's generation, managed state, the sandbox).
type layerMergeApplyWorker struct {
	river.WorkerDefaults[jobs.LayerMergeApply]
	d *worker.Deps
}

func (w *layerMergeApplyWorker) Timeout(*river.Job[jobs.LayerMergeApply]) time.Duration {
	return jobs.LayerMergeApplyTimeout
}

// mergeTurnPoll is how often a post-merge apply asks whether the ones
// merged before it ended.
const mergeTurnPoll = 200 * time.Millisecond

// Work is the job in three steps for each layer: mergeStartOf decides from
// the layer's row and the layers before it whether it runs, runLayer
// gathers what planning (and, when the plan is the reviewed one, applying)
// the merge commit gave and decides its mergeOutcome, and settle acts once
// on that. A layer an earlier run of this job settled is left as it is.
func (w *layerMergeApplyWorker) Work(ctx context.Context, job *river.Job[jobs.LayerMergeApply]) error {
	a, d := job.Args, w.d
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	runID := worker.RunID(ctx)
	logURL := d.LogURL(runID)
	rows, err := d.Store.MergeAppliesOfPR(ctx, a.FullName, a.PR)
	if err != nil {
		return err
	}
	byID := map[int64]*store.MergeApply{}
	for _, r := range rows {
		byID[r.ID] = r
	}
	notApplied := map[string]bool{}
	var lines []string
	for _, step := range a.Steps {
		name, row := step.Layer.Name, byID[step.ID]
		var out mergeOutcome
		switch start, dep := mergeStartOf(row, step.Layer.DependsOn, notApplied); start {
		case mergeStartSettled:
			continue
		case mergeStartSkip:
			why := fmt.Sprintf("it depends on %s, which was not applied", markdown.Quote(dep))
			out = mergeOutcome{State: mergeSkipped, Detail: why, Check: mergeCheck(a.PR, a.HeadSHA, name, mergeSkipped, why)}
		case mergeStartRun:
			if err := w.waitTurn(ctx, a, row); err != nil {
				return err
			}
			if err := d.Store.SetMergeApply(ctx, row.ID, string(mergeRunning), "", step.CheckRunID); err != nil {
				return err
			}
			out = w.runLayer(ctx, rep, a, step, runID, logURL)
			if queue.LeaseLost(ctx) {
				return context.Cause(ctx) // the replica that claims the run reports it interrupted
			}
		}
		if out.State != mergeApplied && out.State != mergeNoChanges {
			notApplied[name] = true
		}
		if err := w.settle(context.WithoutCancel(ctx), rep, a, step, row, out); err != nil {
			return err
		}
		lines = append(lines, mergeLine(name, out.State, out.Detail))
	}
	ctx = context.WithoutCancel(ctx)
	if err := endMerge(ctx, d, rep, a.Repo, a.PR); err != nil {
		return err
	}
	if len(lines) == 0 {
		return nil
	}
	_, err = rep.Comment(ctx, a.PR, fmt.Sprintf("**Terraform apply after merge** at %s (merge of %s) for @%s:\n\n%s\n",
		report.Short(a.HeadSHA), report.Short(a.ReviewedSHA), a.User, strings.Join(lines, "\n")))
	return err
}

// settle acts once on a layer's outcome: the lock, the stored state, the
// check. The lock goes before the state says the apply ended: the next
// merge's apply, waiting for that state, then finds it free.
func (w *layerMergeApplyWorker) settle(ctx context.Context, rep *report.Reporter, a jobs.LayerMergeApply, step jobs.MergeStep, row *store.MergeApply, out mergeOutcome) error {
	d, name := w.d, step.Layer.Name
	if !out.State.keepsLock() {
		if err := unlockMerged(ctx, d, rep, a.FullName, name, a.PR); err != nil {
			return err
		}
	}
	if err := d.Store.SetMergeApply(ctx, row.ID, string(out.State), out.Detail, step.CheckRunID); err != nil {
		return err
	}
	out.Check.Name, out.Check.ExternalID = checks.Apply(name), checks.ExternalID(a.PR)
	return rep.UpdateCheck(ctx, step.CheckRunID, out.Check)
}

// waitTurn waits until the post-merge applies of the layer merged before
// row ended, and the close jobs of the merges before it with them
// (mergeTurn says why): applies of a layer happen in merge order.
func (w *layerMergeApplyWorker) waitTurn(ctx context.Context, a jobs.LayerMergeApply, row *store.MergeApply) error {
	repo, err := w.d.Repo(a.Repo)
	if err != nil {
		return err
	}
	known := map[string]string{} // merge commit -> its compare with ours, which never changes
	for {
		others, err := w.otherMerges(ctx, repo, a, row, known)
		if err != nil {
			return err
		}
		if mergeTurn(row, others) == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return context.Cause(ctx)
		case <-time.After(mergeTurnPoll):
		}
	}
}

// otherMerges are the facts of mergeTurn: the repository's close jobs of
// merges not ended, then the layer's post-merge applies not ended (in that
// order: a close that ends between the two reads recorded its rows before
// it ended), each with where its merge commit stands to row's.
func (w *layerMergeApplyWorker) otherMerges(ctx context.Context, repo pull.Repository, a jobs.LayerMergeApply, row *store.MergeApply,
	known map[string]string) ([]otherMerge, error) {
	closes, err := queue.Unfinished(ctx, w.d.Store, jobs.PullRequest{}.Kind(), a.FullName, "action", "pr", "merge_sha")
	if err != nil {
		return nil, err
	}
	var out []otherMerge
	for _, c := range closes {
		pr, _ := strconv.Atoi(c.Args["pr"])
		if c.Args["action"] == "closed" && c.Args["merge_sha"] != "" && pr != a.PR {
			out = append(out, otherMerge{PR: pr, MergeSHA: c.Args["merge_sha"]})
		}
	}
	rows, err := w.d.Store.MergeAppliesIn(ctx, a.FullName, row.Layer, string(mergeQueued), string(mergeRunning))
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.PR != a.PR {
			out = append(out, otherMerge{PR: r.PR, MergeSHA: r.MergeSHA, Row: r})
		}
	}
	for i, o := range out {
		status, ok := known[o.MergeSHA]
		if !ok {
			cmp, err := repo.Compare(ctx, o.MergeSHA, row.MergeSHA)
			if err != nil {
				// Unknown this time (mergedBefore says what then); asked
				// again at the next poll.
				worker.Warn(ctx, err, "order the post-merge apply of #"+strconv.Itoa(row.PR)+" after #"+strconv.Itoa(o.PR))
				continue
			}
			status, known[o.MergeSHA] = cmp.Status, cmp.Status
		}
		out[i].Status = status
	}
	return out, nil
}

// runLayer plans the layer at the merge commit, compares, and applies:
// planMerge gathers what planning gave and mergePlanOutcomeOf decides
// whether it applies; applyMerge gathers what applying gave and
// mergeApplyOutcomeOf names it.
func (w *layerMergeApplyWorker) runLayer(ctx context.Context, rep *report.Reporter, a jobs.LayerMergeApply, step jobs.MergeStep, runID int64, logURL string) mergeOutcome {
	planned := w.planMerge(ctx, rep, a, step, runID, logURL)
	out, apply := mergePlanOutcomeOf(a, step.Layer.Name, logURL, planned)
	if !apply {
		return out
	}
	return mergeApplyOutcomeOf(a, step.Layer.Name, logURL, w.applyMerge(ctx, rep, a, step, planned, runID, logURL))
}

// planMerge gathers what planning the layer at the merge commit gives, up
// to the first fact that ends it (mergePlanRun): it takes the layer's lock
// (the PR's own, lock: on_plan; or, its turn come, the one the post-merge
// applies before it released, lock: on_apply), reads the reviewed changes,
// then plans holding the layer's slot.
func (w *layerMergeApplyWorker) planMerge(ctx context.Context, rep *report.Reporter, a jobs.LayerMergeApply, step jobs.MergeStep, runID int64, logURL string) (r mergePlanRun) {
	d, name := w.d, step.Layer.Name
	held, ok, err := d.Store.TryLock(ctx, store.Lock{Repo: a.FullName, Layer: name, PR: a.PR, HeadSHA: a.ReviewedSHA, Holder: a.User,
		InstallationID: a.InstallationID})
	if err != nil {
		return mergePlanRun{LockErr: err}
	}
	if !ok {
		return mergePlanRun{Held: held}
	}
	if r.Reviewed, r.ReviewedErr = reviewedChanges(ctx, d, a.FullName, a.PR, name, a.ReviewedSHA); r.ReviewedErr != nil {
		return r
	}
	worker.Warn(ctx, rep.UpdateCheck(ctx, step.CheckRunID, report.Check{Name: checks.Apply(name), Status: "in_progress", ExternalID: checks.ExternalID(a.PR),
		Title: "Planning the merge commit", Summary: fmt.Sprintf("Planning %s at %s, to compare with the plan reviewed at %s.", markdown.Quote(name), a.HeadSHA, a.ReviewedSHA),
		DetailsURL: logURL}), "show the post-merge plan running")

	log := d.LogWriter(ctx)
	release, err := waitSlot(ctx, d.Store, a.FullName, name, runID)
	if err != nil {
		log.Close()
		r.SlotErr = err
		return r
	}
	if r.Base, r.BaseErr = d.Store.LastApply(ctx, a.FullName, name); r.BaseErr != nil {
		release()
		log.Close()
		return r
	}
	r.Plan, r.PlanErr = planLayer(ctx, d, a.Repo, a.HeadSHA, step.Layer, log, nil, nil)
	release()
	var sensitive []string
	if r.Plan != nil {
		sensitive = r.Plan.Sensitive
	}
	r.Redact = closeLog(ctx, d, log, rep, sensitive).Redact
	return r
}

// applyMerge saves the plan of the merge commit and applies it through the
// normal apply path (applyLayer: the lock, the slot, the layer's
// generation, managed state, the sandbox).
func (w *layerMergeApplyWorker) applyMerge(ctx context.Context, rep *report.Reporter, a jobs.LayerMergeApply, step jobs.MergeStep, planned mergePlanRun, runID int64, logURL string) mergeApplyRun {
	d, name := w.d, step.Layer.Name
	if err := d.Store.SavePlan(ctx, store.Plan{Repo: a.FullName, PR: a.PR, Layer: name, HeadSHA: a.HeadSHA, PlanFile: planned.Plan.PlanFile,
		Summary: planned.Redact(planned.Plan.Summary()), HasChanges: true, BaseGeneration: planned.Base.Generation}); err != nil {
		return mergeApplyRun{SaveErr: err}
	}
	apply := jobs.LayerApply{Repo: a.Repo, PR: a.PR, Target: name, HeadSHA: a.HeadSHA, User: a.User}
	res, applyRep, err := (&layerApplyWorker{d: d}).applyLayer(ctx, rep, apply, jobs.ApplyStep{Layer: step.Layer, CheckRunID: step.CheckRunID}, runID, logURL)
	return mergeApplyRun{Applied: res, Err: err, Redact: applyRep.Redact}
}

// recoverNote says what to do after a post-merge apply failed.
func recoverNote(pr int, layer string) string {
	return fmt.Sprintf("the layer may be partly applied, so #%d keeps its lock and no other pull request plans or applies it. "+
		"Read the run's log and fix the cause (in a new pull request if the code is at fault), then release the lock with "+
		"`/unlock %s` on #%d (or the Unlock button of `strata/lock: %s`)", pr, layer, pr, layer)
}

// endMerge releases the locks of the PR's layers whose post-merge apply
// ended, and forgets the PR once none is left: a failed or interrupted
// one keeps its lock.
func endMerge(ctx context.Context, d *worker.Deps, rep *report.Reporter, repo jobs.Repo, pr int) error {
	rows, err := d.Store.MergeAppliesOfPR(ctx, repo.FullName, pr)
	if err != nil {
		return err
	}
	kept := false
	var errs []error
	for _, r := range rows {
		if mergeState(r.State).keepsLock() {
			kept = true
			continue
		}
		errs = append(errs, unlockMerged(ctx, d, rep, repo.FullName, r.Layer, pr))
	}
	if !kept {
		errs = append(errs, d.Store.DeletePlansOfPR(ctx, repo.FullName, pr), d.Store.DeletePlanChanges(ctx, repo.FullName, pr),
			d.Store.ForgetPR(ctx, repo.FullName, pr))
	}
	return errors.Join(errs...)
}

// unlockMerged releases a merged PR's lock on a layer, if it holds it.
func unlockMerged(ctx context.Context, d *worker.Deps, rep *report.Reporter, repo, layer string, pr int) error {
	gone, err := d.Store.Unlock(ctx, repo, layer, pr)
	if err != nil || gone == nil {
		return err
	}
	return releaseLock(ctx, d, rep, gone, "its apply after the merge ended")
}

// mergeApplyInterrupted reports a post-merge apply whose server died while it
// ran: it is not run again; the PR keeps the locks of the layers it did
// not finish.
func mergeApplyInterrupted(ctx context.Context, d *worker.Deps, job queue.Interrupted) error {
	var a jobs.LayerMergeApply
	if err := json.Unmarshal(job.Args, &a); err != nil {
		return fmt.Errorf("interrupted post-merge apply %d: %w", job.JobID, err)
	}
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	rows, err := d.Store.MergeAppliesOfPR(ctx, a.FullName, a.PR)
	if err != nil {
		return err
	}
	var names []string
	for _, r := range rows {
		if s := mergeState(r.State); s != mergeQueued && s != mergeRunning {
			continue
		}
		names = append(names, r.Layer)
		note := "the server stopped while this apply after the merge ran; it will not be run again. " + recoverNote(a.PR, r.Layer)
		if err := d.Store.SetMergeApply(ctx, r.ID, string(mergeInterrupted), note, r.CheckRunID); err != nil {
			return err
		}
		if r.CheckRunID != 0 {
			c := mergeCheck(a.PR, a.HeadSHA, r.Layer, mergeInterrupted, note)
			c.Title = "Apply interrupted"
			if err := rep.UpdateCheck(ctx, r.CheckRunID, c); err != nil {
				return err
			}
		}
	}
	if len(names) == 0 {
		return nil
	}
	_, err = rep.Comment(ctx, a.PR, fmt.Sprintf("⚠️ **Terraform apply after merge interrupted** at %s (%s): the server stopped while it ran, "+
		"so it may be partly applied. This pull request keeps the locks; check the layers' state, then `/unlock` them.", report.Short(a.HeadSHA), report.Names(names)))
	return err
}
