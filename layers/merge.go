package layers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"strata.dev/strata/checks"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// auto_apply: on_merge (docs/governance.md). A plan keeps its resource
// changes (keepReviewed); when its PR merges, mergeOnClose decides which
// layers apply (applyOnMerge), keeps their locks and enqueues one
// jobs.LayerMergeApply, which merge_run.go runs.

// keepReviewed keeps a plan's resource changes, sealed, for the comparison
// with the plan at the merge commit should the PR merge. Every plan keeps
// them: the default branch may turn auto_apply on after the plan.
func keepReviewed(ctx context.Context, d *worker.Deps, a jobs.LayerPlan, res *terraform.PlanResult) error {
	if res == nil {
		return nil
	}
	body, err := json.Marshal(res.Changes)
	if err != nil {
		return err
	}
	return d.Store.SavePlanChanges(ctx, a.FullName, a.PR, a.Target, a.HeadSHA, body)
}

// reviewedChanges are the changes keepReviewed kept.
func reviewedChanges(ctx context.Context, d *worker.Deps, repo string, pr int, layer, head string) ([]terraform.PlannedChange, error) {
	body, err := d.Store.PlanChanges(ctx, repo, pr, layer, head)
	if err != nil {
		return nil, err
	}
	var out []terraform.PlannedChange
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("the reviewed changes of %s: %w", layer, err)
	}
	return out, nil
}

// mergeOnClose starts the post-merge applies of a merged PR and returns
// the layers whose locks the PR keeps until they end: it gathers the
// facts (mergedLayers, readMergeFacts), applyOnMerge decides each layer's
// step, and startMergeApplies acts once per step. Policy (auto_apply,
// apply requirements) is the default branch's before the merge (the
// payload's base), so the PR's own edits to .strata.yaml do not count.
func mergeOnClose(ctx context.Context, d *worker.Deps, rep *report.Reporter, ev jobs.PullRequest) (map[string]bool, error) {
	if !ev.Merged || ev.MergeSHA == "" {
		return nil, nil
	}
	pr, err := d.PR(ctx, ev.Repo, ev.PR)
	if err != nil {
		return nil, err
	}
	policyRef := ev.BaseSHA
	if policyRef == "" {
		policyRef = ev.DefaultBranch
	}
	cfg, layers, err := mergedLayers(ctx, d, pr, ev, policyRef)
	if err != nil || len(layers) == 0 {
		return nil, err
	}
	f, err := readMergeFacts(ctx, d, pr, ev, policyRef, cfg, layers)
	if err != nil {
		return nil, err
	}
	return startMergeApplies(ctx, d, rep, ev, applyOnMerge(f))
}

// mergedLayers are the layers the merged PR changed that apply on merge,
// with the policy it merged under; none on a config that does not load.
func mergedLayers(ctx context.Context, d *worker.Deps, pr pull.Context, ev jobs.PullRequest, policyRef string) (*worker.RepoConfig, []config.Layer, error) {
	cfg, err := d.LoadRepoConfig(ctx, pr, ev.MergeSHA, policyRef)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		return nil, nil, nil // nothing applies on a config that does not load
	}
	if err != nil {
		return nil, nil, err
	}
	all, err := repoLayers(ctx, d, ev.Repo, ev.MergeSHA, cfg)
	if err != nil {
		return nil, nil, err
	}
	var onMerge []config.Layer
	for _, l := range all {
		if l.AppliesOnMerge() {
			onMerge = append(onMerge, l)
		}
	}
	if len(onMerge) == 0 {
		return nil, nil, nil
	}
	files, err := pr.ChangedFiles(ctx)
	if err != nil {
		return nil, nil, err
	}
	modules, err := readLayerModules(ctx, d, ev.Repo, ev.MergeSHA, onMerge, files, false)
	if err != nil {
		return nil, nil, err
	}
	return cfg, touchedLayers(onMerge, files, modules, false), nil
}

// readMergeFacts reads what applyOnMerge decides the layers' steps on:
// the PR's plans, the store's rows of each layer, the requirements, code
// owners from the base the PR merged into (the merge may have edited
// CODEOWNERS, and a PR does not name its own owners), the policy.
func readMergeFacts(ctx context.Context, d *worker.Deps, pr pull.Context, ev jobs.PullRequest, policyRef string, cfg *worker.RepoConfig, layers []config.Layer) (mergeFacts, error) {
	f := mergeFacts{PR: ev.PR, Head: ev.HeadSHA, Layers: layers, Reviewed: map[string]bool{}, Locks: map[string]int{}, Merging: map[string]bool{}}
	var err error
	if f.Plans, err = d.Store.PlansOfPR(ctx, ev.FullName, ev.PR); err != nil {
		return f, err
	}
	for _, l := range layers {
		if err := readMergeRows(ctx, d, ev, l.Name, &f); err != nil {
			return f, err
		}
	}
	if f.Requirements, err = readRequirements(ctx, pr, layers); err != nil {
		return f, err
	}
	if err := readCodeownersAt(ctx, pr, policyRef, layers, fetchTree(ctx, d, ev.Repo, ev.HeadSHA), &f.Requirements); err != nil {
		return f, err
	}
	f.Policy, err = readPolicyFacts(ctx, d, ev.FullName, ev.PR, ev.HeadSHA, layers, cfg.Repo, f.Plans)
	return f, err
}

// readMergeRows reads the store's facts of one layer: whether the PR's
// reviewed plan kept its changes, who holds the layer's lock, and whether
// that holder's own post-merge apply is still to end.
func readMergeRows(ctx context.Context, d *worker.Deps, ev jobs.PullRequest, layer string, f *mergeFacts) error {
	if _, err := d.Store.PlanChanges(ctx, ev.FullName, ev.PR, layer, ev.HeadSHA); err == nil {
		f.Reviewed[layer] = true
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	if lock, err := d.Store.Lock(ctx, ev.FullName, layer); err == nil {
		f.Locks[layer] = lock.PR
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	last, err := d.Store.LastMergeApplyOf(ctx, ev.FullName, layer)
	if errors.Is(err, store.ErrNotFound) {
		last, err = nil, nil
	}
	f.Merging[layer] = holderMerging(last, f.Locks[layer])
	return err
}

// startMergeApplies records each layer's post-merge apply (a redelivered
// close finds them recorded), creates their checks on the merge commit and
// enqueues the job; a layer whose lock the PR does not hold takes it when
// its turn comes (merge_run.go).
func startMergeApplies(ctx context.Context, d *worker.Deps, rep *report.Reporter, ev jobs.PullRequest, steps []mergeStep) (map[string]bool, error) {
	keep := map[string]bool{}
	user := ev.Sender
	job := jobs.LayerMergeApply{Repo: ev.Repo, PR: ev.PR, HeadSHA: ev.MergeSHA, ReviewedSHA: ev.HeadSHA, User: user}
	var lines []string
	for _, s := range steps {
		row, err := d.Store.AddMergeApply(ctx, store.MergeApply{Repo: ev.FullName, PR: ev.PR, Layer: s.Layer.Name, HeadSHA: ev.HeadSHA,
			MergeSHA: ev.MergeSHA, MergedAt: mergedAt(d, ev), State: string(s.State), Detail: s.Why, InstallationID: ev.InstallationID})
		if err != nil {
			return nil, err
		}
		state := mergeState(row.State)
		if state.keepsLock() {
			keep[s.Layer.Name] = true
		}
		if row.CheckRunID == 0 {
			c := mergeCheck(ev.PR, ev.MergeSHA, s.Layer.Name, state, row.Detail)
			id, err := rep.CreateCheck(ctx, c)
			if err != nil {
				return nil, err
			}
			if err := d.Store.SetMergeApply(ctx, row.ID, row.State, row.Detail, id); err != nil {
				return nil, err
			}
			row.CheckRunID = id
			if state != mergeQueued {
				lines = append(lines, mergeLine(s.Layer.Name, state, row.Detail))
			}
		}
		if state == mergeQueued {
			job.Steps = append(job.Steps, jobs.MergeStep{Layer: specOf(s.Layer), ID: row.ID, CheckRunID: row.CheckRunID})
		}
	}
	if len(lines) > 0 {
		if _, err := rep.Comment(ctx, ev.PR, fmt.Sprintf("**Terraform apply after merge** of %s: not applied:\n\n%s\n",
			report.Short(ev.MergeSHA), strings.Join(lines, "\n"))); err != nil {
			return nil, err
		}
	}
	if len(job.Steps) == 0 {
		return keep, nil
	}
	var names []string
	for _, s := range job.Steps {
		names = append(names, s.Layer.Name)
	}
	job.Target = strings.Join(names, ",")
	_, err := d.Queue.Enqueue(ctx, job, nil)
	return keep, err
}

func mergedAt(d *worker.Deps, ev jobs.PullRequest) (at time.Time) {
	if !ev.MergedAt.IsZero() {
		return ev.MergedAt
	}
	return d.Now()
}

// mergeCheck is the `strata/apply: LAYER` check on the merge commit in a
// state. It has no button. A Re-plan would reach the merged PR, whose
// /plan is refused as closed; and no re-run of the post-merge apply could
// help: a plan that differed differs again unless the world moves back, a
// failed apply left the layer partly applied (its plan can no longer be
// the reviewed one), and a merged PR can no longer get the approvals
// (reviews, code owners, /approve-policies) it lacked. Each of those is
// recovered from a new pull request, whose plan is reviewed like any
// other, so the check says so in words instead.
func mergeCheck(pr int, mergeSHA, layer string, state mergeState, detail string) report.Check {
	c := report.Check{Name: checks.Apply(layer), HeadSHA: mergeSHA, ExternalID: checks.ExternalID(pr)}
	switch state {
	case mergeQueued:
		c.Status = "queued"
		c.Title = "Waiting to plan the merge commit"
		c.Summary = fmt.Sprintf("#%d merged: %s applies on merge. Strata plans it at this commit and applies that plan only if it makes the changes of the plan that was reviewed.", pr, markdown.Quote(layer))
	case mergeApplied:
		c.Conclusion, c.Title, c.Summary = "success", "Applied", fmt.Sprintf("%s: %s.", markdown.Quote(layer), detail)
	case mergeNoChanges:
		c.Conclusion, c.Title, c.Summary = "success", "No changes", fmt.Sprintf("%s: %s; nothing to apply.", markdown.Quote(layer), detail)
	case mergeSkipped:
		c.Conclusion, c.Title, c.Summary = "skipped", "Not applied", fmt.Sprintf("%s: %s.", markdown.Quote(layer), detail)
	default:
		c.Conclusion, c.Title, c.Summary = "failure", "Not applied", fmt.Sprintf("%s was not applied after #%d merged: %s.", markdown.Quote(layer), pr, detail)
	}
	return c
}

// mergeLine is a layer's line in the comment on the PR.
func mergeLine(layer string, state mergeState, detail string) string {
	icon := map[mergeState]string{mergeApplied: "✅", mergeNoChanges: "✅", mergeSkipped: "⏭️"}[state]
	if icon == "" {
		icon = "❌"
	}
	return fmt.Sprintf("- %s %s: %s", icon, markdown.Quote(layer), detail)
}
