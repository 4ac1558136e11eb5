package layers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/report"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// layerApplyWorker applies saved plans, layer after layer in dependency
// order; a failed layer stops the layers after it. It runs once: its kind is
// never retried, and an apply cut short by a crash is reported by
// applyInterrupted.
type layerApplyWorker struct {
	river.WorkerDefaults[jobs.LayerApply]
	d *worker.Deps
}

func (w *layerApplyWorker) Timeout(*river.Job[jobs.LayerApply]) time.Duration {
	return jobs.LayerApplyTimeout
}

// applyActions are the buttons of an apply check, and of a plan check that
// did not plan: Re-plan.
var applyActions = []report.Action{{Label: "Re-plan", Description: "Plan this layer again", Identifier: checks.ButtonPlan}}

func (w *layerApplyWorker) Work(ctx context.Context, job *river.Job[jobs.LayerApply]) error {
	a, d := job.Args, w.d
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	runID := worker.RunID(ctx)
	logURL := d.LogURL(runID)
	var lines []string
	failed := ""
	for _, step := range a.Steps {
		name := step.Layer.Name
		if failed != "" {
			lines = append(lines, fmt.Sprintf("- ⏭️ %s: not applied, %s failed before it", markdown.Quote(name), markdown.Quote(failed)))
			worker.Warn(ctx, rep.UpdateCheck(ctx, step.CheckRunID, report.Check{Name: checks.Apply(name), Conclusion: "skipped",
				ExternalID: checks.ExternalID(a.PR), Title: "Not applied", Summary: fmt.Sprintf("%s failed before this layer.", markdown.Quote(failed)), Actions: applyActions}),
				"complete a skipped apply check")
			continue
		}
		res, runRep, err := w.applyLayer(ctx, rep, a, step, runID, logURL)
		if err != nil && queue.LeaseLost(ctx) {
			// The replica that claims the run reports it interrupted.
			return context.Cause(ctx)
		}
		ctx := context.WithoutCancel(ctx)
		if err != nil {
			failed = name
			// The comment goes out through rep, which knows only the server's
			// secrets: this layer's sensitive values are masked here.
			lines = append(lines, runRep.Redact(fmt.Sprintf("- ❌ %s: %s", markdown.Quote(name), markdown.Quote(report.FirstLine(errorText(err))))))
			if uerr := runRep.UpdateCheck(ctx, step.CheckRunID, failedCheck(checks.Apply(name), a.HeadSHA, a.PR, err, logURL, applyActions)); uerr != nil {
				return uerr
			}
			continue
		}
		lines = append(lines, fmt.Sprintf("- ✅ %s: applied", markdown.Quote(name)))
		if err := runRep.UpdateCheck(ctx, step.CheckRunID, report.Check{Name: checks.Apply(name), Conclusion: "success",
			ExternalID: checks.ExternalID(a.PR), Title: "Applied", LogURL: logURL, DetailsURL: logURL,
			Summary: fmt.Sprintf("Applied the plan of %s saved at %s, for @%s, with %s %s.", markdown.Quote(name), a.HeadSHA, a.User, res.Engine.Name(), res.TerraformVersion),
			Text:    markdown.Block("", res.Text), Actions: applyActions}); err != nil {
			return err
		}
	}
	ctx = context.WithoutCancel(ctx)
	if err := updateApplied(ctx, d, rep, a.Repo, a.PR, a.HeadSHA); err != nil {
		return err
	}
	title := "**Terraform apply**"
	if failed != "" {
		title += " failed"
	}
	_, err = rep.Comment(ctx, a.PR, fmt.Sprintf("%s at %s for @%s:\n\n%s\n", title, report.Short(a.HeadSHA), a.User, strings.Join(lines, "\n")))
	return err
}

// applyLayer applies one layer's saved plan, once: the plan is marked
// applied before Terraform runs, so no path applies it twice. Holding the
// layer's slot, it reads what /apply was decided on again
// (applyStepRefusal): another PR's apply since, an /unlock, a new plan.
func (w *layerApplyWorker) applyLayer(ctx context.Context, rep *report.Reporter, a jobs.LayerApply, step jobs.ApplyStep, runID int64, logURL string) (*terraform.ApplyResult, *report.Reporter, error) {
	d, name := w.d, step.Layer.Name
	release, err := waitSlot(ctx, d.Store, a.FullName, name, runID)
	if err != nil {
		return nil, rep, err
	}
	defer release()
	f, err := readStepFacts(ctx, d, a, name)
	if err != nil {
		return nil, rep, err
	}
	if why := applyStepRefusal(step.Layer, a.PR, f); why != "" {
		return nil, rep, errors.New(why)
	}
	if err := rep.UpdateCheck(ctx, step.CheckRunID, report.Check{Name: checks.Apply(name), Status: "in_progress",
		ExternalID: checks.ExternalID(a.PR), Title: "Applying", Summary: fmt.Sprintf("Applying the plan of %s saved at %s.", markdown.Quote(name), a.HeadSHA),
		DetailsURL: logURL}); err != nil {
		return nil, rep, err
	}
	// The engine and version that made the plan apply it. A plan no binary
	// of the server's can apply is refused before it is marked applied, so
	// that it stays until a new /plan replaces it.
	bin, err := planBinary(ctx, d, step.Layer.Engine, f.Plan.PlanFile)
	if err != nil {
		return nil, rep, err
	}
	// A replica that cannot sandbox Terraform refuses before the plan is
	// marked applied: the plan stays for a replica that can.
	if err := sandbox.Detect(d.Config.Terraform.SandboxSettings()).Err(); err != nil {
		return nil, rep, err
	}
	ok, err := d.Store.MarkApplied(ctx, a.FullName, a.PR, name, a.HeadSHA)
	if err != nil {
		return nil, rep, err
	}
	if !ok {
		return nil, rep, errors.New("this plan was already applied")
	}
	res, runRep, err := runApply(ctx, d, rep, a, step.Layer, f.Plan, bin)
	// Applied or not, the layer's generation moved on: the other PRs' plans
	// of it say they are stale.
	worker.Warn(ctx, markOthersStale(context.WithoutCancel(ctx), d, rep, a.FullName, name), "mark other plans of the layer stale")
	return res, runRep, err
}

// readStepFacts reads what applyStepRefusal decides on.
func readStepFacts(ctx context.Context, d *worker.Deps, a jobs.LayerApply, name string) (stepFacts, error) {
	plans, err := d.Store.PlansOfPR(ctx, a.FullName, a.PR)
	if err != nil {
		return stepFacts{}, err
	}
	f := stepFacts{AtHead: plansAt(plans, a.HeadSHA)}
	f.Plan, err = d.Store.PlanAt(ctx, a.FullName, a.PR, name, a.HeadSHA)
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, store.ErrPlanUnsealed) {
		f.Plan = nil
	} else if err != nil {
		return stepFacts{}, err
	}
	f.Lock, err = d.Store.Lock(ctx, a.FullName, name)
	if errors.Is(err, store.ErrNotFound) {
		f.Lock = nil
	} else if err != nil {
		return stepFacts{}, err
	}
	f.Last, err = d.Store.LastApply(ctx, a.FullName, name)
	return f, err
}

// runApply runs Terraform's apply of a plan marked applied, with its log,
// and returns the reporter that masks the apply's sensitive values too.
func runApply(ctx context.Context, d *worker.Deps, rep *report.Reporter, a jobs.LayerApply, l jobs.LayerSpec, plan *store.Plan, bin terraform.Binary) (*terraform.ApplyResult, *report.Reporter, error) {
	log := d.LogWriter(ctx)
	defer log.Close()
	setup, done, err := layerSetup(ctx, d, a.Repo, a.HeadSHA, l, store.StateWrite, log)
	if err != nil {
		return nil, rep, err
	}
	defer done()
	if bin.Path != "" {
		setup.TerraformBin, setup.Kind = bin.Path, bin.Kind
	}
	log.Mask(terraform.SensitiveInputs(setup, l.VarFiles)...)
	// The plan's sensitive values mask the apply's log from its first
	// line, and its check and comment, as they masked the plan's.
	res, err := terraform.Apply(ctx, terraform.ApplyInput{Setup: setup, PlanFile: plan.PlanFile,
		Sensitive: func(v []string) { log.Mask(v...) }})
	var sensitive []string
	if res != nil {
		sensitive = res.Sensitive
	}
	return res, closeLog(ctx, d, log, rep, sensitive), err
}

// applyInterrupted reports an apply whose server died while it ran: it is
// not run again; the lock stays with the PR.
func applyInterrupted(ctx context.Context, d *worker.Deps, job queue.Interrupted) error {
	var a jobs.LayerApply
	if err := json.Unmarshal(job.Args, &a); err != nil {
		return fmt.Errorf("interrupted apply %d: %w", job.JobID, err)
	}
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	note := "The server stopped while this apply ran, so it may be partly applied. It will not be run again, " +
		"and this pull request keeps the lock. Check the layer's state (for example `terraform plan` locally, " +
		"or look for a stale state lock) before planning again with `/plan`."
	var names []string
	for _, step := range a.Steps {
		names = append(names, step.Layer.Name)
		status, err := rep.CheckStatus(ctx, step.CheckRunID)
		if err != nil {
			return err
		}
		if status == "completed" {
			continue
		}
		if err := rep.UpdateCheck(ctx, step.CheckRunID, report.Check{Name: checks.Apply(step.Layer.Name), Conclusion: "failure",
			ExternalID: checks.ExternalID(a.PR), Title: "Apply interrupted", Summary: note, Actions: applyActions}); err != nil {
			return err
		}
	}
	_, err = rep.Comment(ctx, a.PR, fmt.Sprintf("⚠️ **Terraform apply interrupted** at %s (%s): %s", report.Short(a.HeadSHA), report.Names(names), note))
	return err
}
