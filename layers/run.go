package layers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// errSuperseded cancels a plan whose PR moved to a newer head.
var errSuperseded = errors.New("the pull request has a newer head commit")

// layerPlanWorker plans one layer: it waits for the layer's slot, fetches
// the tree at the head, runs the engine, stores the plan and reports it.
type layerPlanWorker struct {
	river.WorkerDefaults[jobs.LayerPlan]
	d *worker.Deps
}

func (w *layerPlanWorker) Timeout(*river.Job[jobs.LayerPlan]) time.Duration {
	return jobs.LayerPlanTimeout
}

func (w *layerPlanWorker) Work(ctx context.Context, job *river.Job[jobs.LayerPlan]) error {
	a, d := job.Args, w.d
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	runID := worker.RunID(ctx)
	logURL := d.LogURL(runID)

	// Nothing runs for an old head, a lock that is gone or a /cancel.
	if why, err := w.stillWanted(ctx, a); err != nil {
		return err
	} else if why != "" {
		return w.cancel(ctx, rep, a, why)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watchPlan(ctx, d.Store, a, cancel)

	release, err := waitSlot(ctx, d.Store, a.FullName, a.Target, runID)
	if err != nil {
		if why := stopReason(context.Cause(ctx)); why != "" {
			return w.cancel(context.WithoutCancel(ctx), rep, a, why)
		}
		return err
	}
	defer release()

	if err := rep.UpdateCheck(ctx, a.CheckRunID, report.Check{Name: checks.Plan(a.Target), Status: "in_progress",
		ExternalID: checks.ExternalID(a.PR), Title: "Planning", Summary: fmt.Sprintf("Planning `%s` at %s.", a.Target, a.HeadSHA),
		DetailsURL: logURL}); err != nil {
		return err
	}

	var log strings.Builder
	res, err := planLayer(ctx, d, a.Repo, a.HeadSHA, a.Layer, &log)
	// Terraform is done with the layer: the next run of it need not wait for
	// this one's report (a long comment on a large plan took 0.9 s).
	release()
	runRep := rep
	if res != nil {
		runRep = runReporter(rep, res.Sensitive)
	}
	d.AppendLog(ctx, log.String(), runRep.Redact)
	if queue.LeaseLost(ctx) {
		// Another replica retries this plan and reports it.
		return context.Cause(ctx)
	}
	stopped := context.Cause(ctx)
	ctx = context.WithoutCancel(ctx)

	outcome := planOutcomeOf(stopped, err, job.Attempt, job.MaxAttempts)
	if outcome != planRetry && stopReason(stopped) == "" {
		// A /cancel that came after Terraform ended still cancels the plan;
		// from here on, /cancel leaves it alone (its reply lists no plan
		// that then reports a result).
		user, serr := d.Store.SettlePlan(ctx, a.Batch, a.Target)
		if serr != nil {
			return serr
		}
		if user != "" {
			stopped = cancelledBy{User: user}
			outcome = planOutcomeOf(stopped, err, job.Attempt, job.MaxAttempts)
		}
	}
	switch outcome {
	case planSuperseded, planCancelled:
		return w.cancel(ctx, runRep, a, stopReason(stopped))
	case planRetry:
		return err // fetching or the like: try again
	case planToolFailed, planInfraFailed:
		if uerr := runRep.UpdateCheck(ctx, a.CheckRunID, failedCheck(checks.Plan(a.Target), a.HeadSHA, a.PR, err, logURL, planActions[1:])); uerr != nil {
			return uerr
		}
		return finishBatchItem(ctx, d, runRep, a.Repo, a.PR, a.Batch, layerReport{Layer: a.Target, Position: a.Position, Error: errorText(err), LogURL: logURL})
	}
	if err := d.Store.SavePlan(ctx, store.Plan{Repo: a.FullName, PR: a.PR, Layer: a.Target, HeadSHA: a.HeadSHA,
		PlanFile: res.PlanFile, Summary: runRep.Redact(res.Summary()), HasChanges: res.HasChanges}); err != nil {
		return err
	}
	if err := runRep.UpdateCheck(ctx, a.CheckRunID, planCheck(a, res, logURL)); err != nil {
		return err
	}
	if err := finishBatchItem(ctx, d, runRep, a.Repo, a.PR, a.Batch, layerReport{Layer: a.Target, Position: a.Position, Result: res, LogURL: logURL}); err != nil {
		return err
	}
	return updateApplied(ctx, d, rep, a.Repo, a.PR, a.HeadSHA)
}

// stillWanted says why a plan should not run: its PR moved on or was
// closed, someone cancelled it, or the PR no longer holds the layer's lock.
func (w *layerPlanWorker) stillWanted(ctx context.Context, a jobs.LayerPlan) (string, error) {
	if user, err := w.d.Store.PlanCancelledBy(ctx, a.Batch, a.Target); err != nil {
		return "", err
	} else if user != "" {
		return cancelledBy{User: user}.Error(), nil
	}
	if head, err := w.d.Store.PRHead(ctx, a.FullName, a.PR); err != nil {
		return "", err
	} else if head != "" && head != a.HeadSHA {
		return errSuperseded.Error(), nil
	}
	l, err := w.d.Store.Lock(ctx, a.FullName, a.Target)
	if errors.Is(err, store.ErrNotFound) || (err == nil && l.PR != a.PR) {
		return "the pull request no longer holds the lock on this layer", nil
	}
	return "", err
}

// cancel completes a plan that did not run, and its part of the comment.
func (w *layerPlanWorker) cancel(ctx context.Context, rep *report.Reporter, a jobs.LayerPlan, why string) error {
	err := rep.UpdateCheck(ctx, a.CheckRunID, report.Check{Name: checks.Plan(a.Target), Conclusion: "cancelled",
		ExternalID: checks.ExternalID(a.PR), Title: "Cancelled", Summary: "Not planned: " + why + "."})
	if err != nil {
		return err
	}
	return finishBatchItem(ctx, w.d, rep, a.Repo, a.PR, a.Batch, layerReport{Layer: a.Target, Position: a.Position, Error: "cancelled: " + why})
}

func errorText(err error) string {
	var tfErr *terraform.Error
	if errors.As(err, &tfErr) && tfErr.Message != "" {
		return "terraform " + tfErr.Command + ": " + tfErr.Message
	}
	return err.Error()
}

// planLayer runs the engine on the layer in a private copy of the tree at
// sha: Terraform writes into its working directory, and fetched trees are
// shared.
func planLayer(ctx context.Context, d *worker.Deps, repo jobs.Repo, sha string, l jobs.LayerSpec, log io.Writer) (*terraform.PlanResult, error) {
	setup, done, err := layerSetup(ctx, d, repo, sha, l, log)
	if err != nil {
		return nil, err
	}
	defer done()
	return terraform.Plan(ctx, terraform.PlanInput{Setup: setup, VarFiles: l.VarFiles})
}

// layerSetup fetches the tree at sha into a work dir of its own.
func layerSetup(ctx context.Context, d *worker.Deps, repo jobs.Repo, sha string, l jobs.LayerSpec, log io.Writer) (terraform.Setup, func(), error) {
	root, release, err := d.Fetch(ctx, repo, sha)
	if err != nil {
		return terraform.Setup{}, nil, err
	}
	defer release()
	runs, err := workRoot(d)
	if err != nil {
		return terraform.Setup{}, nil, err
	}
	work, err := os.MkdirTemp(runs, "run-")
	if err != nil {
		return terraform.Setup{}, nil, err
	}
	done := func() { os.RemoveAll(work) }
	// Fetched trees are shared and read-only; the symlinks the fetcher let
	// through stay inside the tree, and CopyFS keeps them as links.
	if err := os.CopyFS(work, os.DirFS(root)); err != nil {
		done()
		return terraform.Setup{}, nil, fmt.Errorf("copy the tree at %s: %w", sha, err)
	}
	dir := filepath.Join(work, filepath.FromSlash(l.Dir))
	if _, err := os.Stat(dir); err != nil {
		done()
		return terraform.Setup{}, nil, fmt.Errorf("layer %s: directory %s is not in the tree at %s", l.Name, l.Dir, report.Short(sha))
	}
	tf := d.Config.Terraform
	return terraform.Setup{
		WorkDir: dir, Root: work, Workspace: l.Workspace, TerraformBin: d.Config.TerraformBin,
		PluginCacheDir: filepath.Join(absDataDir(d), "plugin-cache"), Log: log, StopGrace: queue.StopGrace(ctx),
		// A PR's code runs here: Terraform gets only the variables the server
		// config gives this layer, and its files in the sandbox.
		Env: tf.EnvOf(repo.FullName, l.Name),
		Sandbox: &terraform.Sandbox{Off: tf.SandboxOff(),
			ReadWrite: tf.SandboxPaths.ReadWrite, ReadOnly: tf.SandboxPaths.ReadOnly},
	}, done, nil
}

func absDataDir(d *worker.Deps) string {
	dir, err := filepath.Abs(d.Config.DataDir)
	if err != nil {
		return d.Config.DataDir
	}
	return dir
}

func workRoot(d *worker.Deps) (string, error) {
	dir := filepath.Join(absDataDir(d), "work")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("work dir under the data dir (STRATA_DATA_DIR): %w", err)
	}
	return dir, nil
}

// waitSlot waits until this run holds the layer's slot: at most one run per
// layer executes at a time, across replicas. The slot is tied to the run
// record, whose heartbeat the queue keeps; a run lost with its process frees
// it.
func waitSlot(ctx context.Context, st *store.Store, repo, layer string, runID int64) (func(), error) {
	return worker.HoldSlot(ctx, st, "layer", runID,
		func(ctx context.Context) (bool, error) { return st.TakeSlot(ctx, repo, layer, runID) },
		func(ctx context.Context) error { return st.ReleaseSlot(ctx, repo, layer, runID) })
}

// watchPlan stops a plan while it waits or runs: when its PR gets a newer
// head (errSuperseded), or someone cancels it with /cancel (cancelledBy).
// Cancelling the context interrupts Terraform, then kills it after the
// grace period.
func watchPlan(ctx context.Context, st *store.Store, a jobs.LayerPlan, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			if head, err := st.PRHead(ctx, a.FullName, a.PR); err == nil && head != "" && head != a.HeadSHA {
				cancel(errSuperseded)
				return
			}
			if user, err := st.PlanCancelledBy(ctx, a.Batch, a.Target); err == nil && user != "" {
				cancel(cancelledBy{User: user})
				return
			}
		}
	}
}

// stopReason is why watchPlan stopped a plan, in the check's words, or ""
// when it did not.
func stopReason(cause error) string {
	var c cancelledBy
	switch {
	case errors.Is(cause, errSuperseded):
		return errSuperseded.Error()
	case errors.As(cause, &c):
		return c.Error()
	}
	return ""
}
