package layers

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/engine/markdown"
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

// Work is the job in three steps: run plans the layer (the facts: what
// Terraform gave, what stopped it), planOutcomeOf names how the run ended,
// and the worker acts once on that outcome.
func (w *layerPlanWorker) Work(ctx context.Context, job *river.Job[jobs.LayerPlan]) error {
	a, d := job.Args, w.d
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	logURL := d.LogURL(worker.RunID(ctx))

	// Nothing runs for an old head, a lock that is gone or a /cancel.
	if why, err := w.stillWanted(ctx, a); err != nil {
		return err
	} else if why != "" {
		return w.cancel(ctx, rep, a, why)
	}

	log := d.LogWriter(ctx)
	defer log.Close()
	run := w.run(ctx, rep, a, log, logURL)
	// What is reported is reported whatever stopped the run: the check
	// says so.
	reportCtx := context.WithoutCancel(ctx)
	if run.early != nil {
		// The check shows the plan: nothing stops the run now.
		return w.finishPlanned(reportCtx, rep, a, log, run, logURL)
	}
	var sensitive []string
	if run.res != nil {
		sensitive = run.res.Sensitive
	}
	runRep := closeLog(reportCtx, d, log, rep, sensitive)
	if queue.LeaseLost(ctx) {
		// Another replica retries this plan and reports it.
		return context.Cause(ctx)
	}
	stopped, err, serr := w.howEnded(reportCtx, a, run, job.Attempt, job.MaxAttempts)
	if serr != nil {
		return serr
	}
	switch planOutcomeOf(stopped, err, job.Attempt, job.MaxAttempts) {
	case planSuperseded, planCancelled:
		return w.cancel(reportCtx, runRep, a, stopReason(stopped))
	case planRetry:
		return err // fetching or the like: try again
	}
	// Terraform failed: a plan it made was reported as soon as it was made.
	if uerr := runRep.UpdateCheck(reportCtx, a.CheckRunID, failedCheck(checks.Plan(a.Target), a.HeadSHA, a.PR, err, logURL, planActions[1:])); uerr != nil {
		return uerr
	}
	return finishBatchItem(reportCtx, d, runRep, a.Repo, a.PR, a.Batch, layerReport{Layer: a.Target, Position: a.Position, layerAt: planAt(a), Error: errorText(err), LogURL: logURL})
}

// howEnded is what stopped a run that shows no plan, and its error. A
// /cancel that came after Terraform ended, before the check, cancels it;
// so does one before Terraform's or Strata's failure ends it, which
// settles it: from then on, /cancel leaves it alone (its reply lists no
// plan that then reports a result). serr is the store's.
func (w *layerPlanWorker) howEnded(ctx context.Context, a jobs.LayerPlan, run planRun, attempt, maxAttempts int) (stopped, err, serr error) {
	stopped, err = run.stopped, run.err
	var c cancelledBy
	if errors.As(err, &c) {
		return c, nil, nil
	}
	if stopReason(stopped) != "" || err == nil || planRetries(err, attempt, maxAttempts) {
		return stopped, err, nil
	}
	user, serr := w.d.Store.SettlePlan(ctx, a.Batch, a.Target)
	if user != "" {
		stopped = cancelledBy{User: user}
	}
	return stopped, err, serr
}

// planRun is what running Terraform on a layer gave.
type planRun struct {
	res *terraform.PlanResult
	err error
	// early is the plan as its text says, once its check shows it (shown).
	early *terraform.PlanResult
	shown report.Check
	// stopped is why the run was stopped (watchPlan, the queue), or nil.
	stopped error
	// policies finds the sets that judge the layer while Terraform plans.
	policies *policyLookup
}

// run plans the layer, holding its slot (one run per layer across
// replicas) until Terraform made the plan: the next run of the layer need
// not wait for this one's JSON and comment (a long comment on a large plan
// took 0.9 s). Until the check shows the plan, watchPlan stops it when its
// PR moves on or someone cancels it. Meanwhile it finds the layer's policy
// sets: the plan keeps its JSON only for them.
func (w *layerPlanWorker) run(ctx context.Context, rep *report.Reporter, a jobs.LayerPlan, log *worker.LogWriter, logURL string) planRun {
	d := w.d
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := &planStop{cancel: cancel}
	go watchPlan(runCtx, d.Store, a, stop.stop)
	ended := func(r planRun) planRun {
		r.stopped = context.Cause(runCtx)
		return r
	}

	release, err := waitSlot(runCtx, d.Store, a.FullName, a.Target, worker.RunID(ctx))
	if err != nil {
		return ended(planRun{err: err})
	}
	// Terraform made no plan: the slot is freed when it ended.
	defer release()
	// Found while Terraform plans; the lookup ends with runCtx.
	policies := lookUpPolicies(runCtx, d, a)
	// Read while the slot keeps applies of the layer out: an apply after
	// this makes the plan stale.
	base, err := d.Store.LastApply(runCtx, a.FullName, a.Target)
	if err != nil {
		return ended(planRun{err: err})
	}
	if err := rep.UpdateCheck(runCtx, a.CheckRunID, report.Check{Name: checks.Plan(a.Target), Status: "in_progress",
		ExternalID: checks.ExternalID(a.PR), Title: "Planning", Summary: fmt.Sprintf("Planning %s at %s.", markdown.Quote(a.Target), a.HeadSHA),
		DetailsURL: logURL}); err != nil {
		return ended(planRun{err: err})
	}
	r := planRun{policies: policies}
	r.res, r.err = planLayer(runCtx, d, a.Repo, a.HeadSHA, a.Layer, log, policies.keepJSON, func(p *terraform.PlanResult) error {
		release() // Terraform is done with the layer.
		// The check links to the log: it is all there first.
		log.Mask(p.Sensitive...)
		log.Flush()
		c, err := w.reportPlanned(runCtx, stop, rep, a, p, logURL, base.Generation)
		if err != nil {
			return err
		}
		r.early, r.shown = p, c
		return nil
	})
	return ended(r)
}

// finishPlanned completes a run whose check shows the plan: the JSON
// completes the log's redaction, the comment and the store's report.
func (w *layerPlanWorker) finishPlanned(ctx context.Context, rep *report.Reporter, a jobs.LayerPlan, log *worker.LogWriter, run planRun, logURL string) error {
	d, res := w.d, run.res
	if run.err != nil {
		worker.Warn(ctx, fmt.Errorf("%s#%d, layer %s: %w", a.FullName, a.PR, a.Target, run.err), "read the plan as JSON; the comment shows what the check shows")
		res = run.early
	} else {
		worker.Warn(ctx, keepReviewed(ctx, d, a, res), "keep the plan's changes for auto_apply: on_merge")
	}
	runRep := closeLog(ctx, d, log, rep, res.Sensitive)
	if masksMore(run.shown, runRep, runReporter(rep, run.early.Sensitive)) {
		// A value the text showed through nonsensitive(), which only
		// the JSON says is sensitive: the check shows it no longer.
		if err := runRep.UpdateCheck(ctx, a.CheckRunID, run.shown); err != nil {
			return err
		}
	}
	if err := finishBatchItem(ctx, d, runRep, a.Repo, a.PR, a.Batch, layerReport{Layer: a.Target, Position: a.Position, layerAt: planAt(a), Result: res, LogURL: logURL,
		CodeOwners: codeownersNext(ctx, d, a, res), Policy: judgeOrWarn(ctx, d, runRep, a, run.policies, res)}); err != nil {
		return err
	}
	return updateApplied(ctx, d, rep, a.Repo, a.PR, a.HeadSHA)
}

// masksMore reports whether full masks something in the check that early
// did not.
func masksMore(c report.Check, full, early *report.Reporter) bool {
	for _, s := range []string{c.Title, c.Summary, c.Text} {
		if full.Redact(s) != early.Redact(s) {
			return true
		}
	}
	return false
}

// planStop is how a running plan is stopped: watchPlan stops it while
// Terraform runs; once its check shows the plan (settle), nothing does.
type planStop struct {
	mu      sync.Mutex
	settled bool
	cancel  context.CancelCauseFunc
}

func (p *planStop) stop(cause error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.settled {
		p.cancel(cause)
	}
}

// settle reports whether the plan is still wanted, and if so keeps it
// from being stopped from now on.
func (p *planStop) settle(ctx context.Context) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if context.Cause(ctx) != nil {
		return false
	}
	p.settled = true
	return true
}

// reportPlanned saves the plan Terraform made (at the layer's generation
// base) and shows it in its check, read from the plan's text, unless the
// plan was stopped meanwhile or cancelled with /cancel after Terraform
// ended: then it says why. It returns the check it wrote.
func (w *layerPlanWorker) reportPlanned(ctx context.Context, stop *planStop, rep *report.Reporter, a jobs.LayerPlan, r *terraform.PlanResult, logURL string, base int64) (report.Check, error) {
	if !stop.settle(ctx) {
		return report.Check{}, context.Cause(ctx)
	}
	// From here on, /cancel leaves the plan alone (its reply lists no plan
	// that then reports a result).
	user, err := w.d.Store.SettlePlan(ctx, a.Batch, a.Target)
	if err != nil {
		return report.Check{}, err
	}
	if user != "" {
		return report.Check{}, cancelledBy{User: user}
	}
	rep = runReporter(rep, r.Sensitive)
	plan := store.Plan{Repo: a.FullName, PR: a.PR, Layer: a.Target, HeadSHA: a.HeadSHA,
		PlanFile: r.PlanFile, Summary: rep.Redact(r.Summary()), HasChanges: r.HasChanges, BaseGeneration: base}
	if err := w.d.Store.SavePlan(ctx, plan); err != nil {
		return report.Check{}, err
	}
	check := planCheck(a, r, logURL)
	if stale, err := staleOnSave(ctx, w.d, &plan); err != nil {
		return report.Check{}, err
	} else if stale != nil {
		check = *stale
	}
	return check, rep.UpdateCheck(ctx, a.CheckRunID, check)
}

// stillWanted says why a plan should not run: its PR moved on or was
// closed, someone cancelled it, or the layer's lock says no (planLockGone).
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
	if errors.Is(err, store.ErrNotFound) {
		l, err = nil, nil
	}
	if err != nil {
		return "", err
	}
	return planLockGone(a.Layer.LockOnApply, l, a.PR), nil
}

// cancel completes a plan that did not run, and its part of the comment.
func (w *layerPlanWorker) cancel(ctx context.Context, rep *report.Reporter, a jobs.LayerPlan, why string) error {
	err := rep.UpdateCheck(ctx, a.CheckRunID, report.Check{Name: checks.Plan(a.Target), Conclusion: "cancelled",
		ExternalID: checks.ExternalID(a.PR), Title: "Cancelled", Summary: "Not planned: " + why + "."})
	if err != nil {
		return err
	}
	return finishBatchItem(ctx, w.d, rep, a.Repo, a.PR, a.Batch, layerReport{Layer: a.Target, Position: a.Position, layerAt: planAt(a), Cancelled: true, Error: "cancelled: " + why})
}

func errorText(err error) string {
	var tfErr *terraform.Error
	if errors.As(err, &tfErr) && tfErr.Message != "" {
		return tfErr.Name() + ": " + tfErr.Message
	}
	return err.Error()
}

// planLayer runs the engine on the layer in a private copy of the tree at
// sha: Terraform writes into its working directory, and fetched trees are
// shared. keepJSON, when not nil, says how much of the plan's JSON to keep
// (terraform.PlanInput.KeepJSON): the plan job's for the layer's policy
// sets; drift and post-merge plans, which no policy judges, keep none.
// planned, when not nil, gets the plan as soon as Terraform made it
// (terraform.PlanInput.Planned). Terraform's output goes to log as it
// prints it, masked with the layer's sensitive inputs too.
func planLayer(ctx context.Context, d *worker.Deps, repo jobs.Repo, sha string, l jobs.LayerSpec, log *worker.LogWriter, keepJSON func() int64, planned func(*terraform.PlanResult) error) (*terraform.PlanResult, error) {
	setup, done, err := layerSetup(ctx, d, repo, sha, l, store.StateRead, log)
	if err != nil {
		return nil, err
	}
	defer done()
	log.Mask(terraform.SensitiveInputs(setup, l.VarFiles)...)
	return terraform.Plan(ctx, terraform.PlanInput{Setup: setup, VarFiles: l.VarFiles, Planned: planned, KeepJSON: keepJSON})
}

// layerSetup fetches the tree at sha into a work dir of its own, with the
// layer's managed state credential in stateMode (store.StateRead or
// StateWrite) when Strata keeps its state (state.go).
func layerSetup(ctx context.Context, d *worker.Deps, repo jobs.Repo, sha string, l jobs.LayerSpec, stateMode string, log io.Writer) (terraform.Setup, func(), error) {
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
	bin, err := binaryFor(ctx, d, l.Engine, dir)
	if err != nil {
		done()
		return terraform.Setup{}, nil, err
	}
	state, revoke, err := managedState(ctx, d, repo, l, dir, stateMode, log)
	if err != nil {
		done()
		return terraform.Setup{}, nil, err
	}
	done = func() { revoke(); os.RemoveAll(work) }
	tf := d.Config.Terraform
	return terraform.Setup{
		State:   state,
		WorkDir: dir, Root: work, Workspace: l.Workspace, TerraformBin: bin.Path, Kind: bin.Kind,
		PluginCacheDir: filepath.Join(absDataDir(d), "plugin-cache"), Log: log, StopGrace: queue.StopGrace(ctx),
		InitCacheDir: filepath.Join(absDataDir(d), "init-cache"), InitCacheScope: repo.FullName,
		CLIConfigFile: tf.CLIConfig,
		// A PR's code runs here: Terraform gets only the variables the server
		// config gives this layer, and its files in the sandbox.
		Env: tf.EnvOf(repo.FullName, l.Name),
		Sandbox: &terraform.Sandbox{Settings: tf.SandboxSettings(),
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
	return worker.HoldSlot(ctx, "layer", runID,
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
