package layers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// Drift detection: a layer whose .strata.yaml on the default branch asks
// for it is planned at the branch's head on its schedule, and the result
// is reported as `strata/drift: LAYER` on that commit and as one issue per
// drifted layer.
//
//	push to the default branch  driftOnPush stores which layers ask, on which schedule
//	every minute                driftScanWorker enqueues a DriftRun per due, unlocked layer
//	DriftRun                    driftRunWorker plans the head, reports, records the state

// driftScanEvery is how often the queue's leader looks for due layers; a
// layer skipped because a PR holds its lock is retried this much later.
const driftScanEvery = time.Minute

var driftScanPeriodic = worker.Periodic{ID: "drift_scan", Every: driftScanEvery, AtStart: true, Args: jobs.DriftScan{}}

// driftOnPush reads .strata.yaml at the default branch's new head and
// stores which layers ask for drift detection: only the default branch's
// file counts, so no PR can turn it on, off, or change its schedule. A file
// that does not parse keeps the schedules as they were (the push's own
// checks report the file's errors).
func driftOnPush(ctx context.Context, d *worker.Deps, ev jobs.Push) error {
	repo, err := d.Repo(ev.Repo)
	if err != nil {
		return err
	}
	cfg, err := worker.ReadRepoConfig(ctx, repo, ev.After)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		worker.Warn(ctx, fmt.Errorf("%s@%s: %w", ev.FullName, ev.After, err), "drift schedules kept: the default branch's config does not parse")
		return nil
	}
	if err != nil {
		return err
	}
	return d.Store.SetDriftLayers(ctx, ev.FullName, ev.InstallationID, driftWanted(cfg), d.Now())
}

// driftScanWorker enqueues a run of each layer that is due.
type driftScanWorker struct {
	river.WorkerDefaults[jobs.DriftScan]
	d *worker.Deps
}

func (w *driftScanWorker) Timeout(*river.Job[jobs.DriftScan]) time.Duration {
	return jobs.DriftScanTimeout
}

func (w *driftScanWorker) Work(ctx context.Context, job *river.Job[jobs.DriftScan]) error {
	d := w.d
	now := d.Now()
	due, err := d.Store.DueDriftLayers(ctx, now)
	if err != nil {
		return err
	}
	return worker.Each(ctx, due, func(ctx context.Context, l *store.DriftLayer) error { return w.scan(ctx, l, now) })
}

func (w *driftScanWorker) scan(ctx context.Context, l *store.DriftLayer, now time.Time) error {
	d := w.d
	lock, err := d.Store.Lock(ctx, l.Repo, l.Layer)
	if errors.Is(err, store.ErrNotFound) {
		lock, err = nil, nil
	}
	if err != nil {
		return err
	}
	step, next := driftStepOf(l, lock, now)
	switch step {
	case driftSkipLocked:
		zerolog.Ctx(ctx).Debug().Str("repo", l.Repo).Str("layer", l.Layer).Int("locked_by", lock.PR).Msg("drift run skipped: the layer is locked")
		return nil
	case driftForget:
		return d.Store.ForgetDriftLayer(ctx, l.Repo, l.Layer)
	}
	owner, name, _ := strings.Cut(l.Repo, "/")
	// Enqueued, then moved: a crash between the two enqueues it again,
	// which the job's uniqueness refuses while the first is pending.
	if _, err := d.Queue.Enqueue(ctx, jobs.DriftRun{Repo: jobs.NewRepo(l.InstallationID, owner, name), Target: l.Layer}, nil); err != nil {
		return err
	}
	return d.Store.SetDriftDue(ctx, l.Repo, l.Layer, next)
}

// driftRunWorker plans one layer at the default branch's head.
type driftRunWorker struct {
	river.WorkerDefaults[jobs.DriftRun]
	d *worker.Deps
}

func (w *driftRunWorker) Timeout(*river.Job[jobs.DriftRun]) time.Duration {
	return jobs.DriftRunTimeout
}

// Work is the job in three steps: look gathers what decides whether the
// layer is planned, driftStartOf decides, and Work acts once on that; a
// layer that is planned is then reported once on what the plan found
// (plan).
func (w *driftRunWorker) Work(ctx context.Context, job *river.Job[jobs.DriftRun]) error {
	a, d := job.Args, w.d
	f, rep, err := w.look(ctx, a)
	if err != nil {
		return err
	}
	run := driftRun{Repo: a.FullName, Layer: a.Target, Branch: f.Branch, SHA: f.SHA, LogURL: d.LogURL(worker.RunID(ctx)), Issue: f.Issue}
	switch driftStartOf(f) {
	case driftStopped:
		return nil
	case driftLocked:
		return w.skip(ctx, a, f.Lock)
	case driftBadConfig:
		run.At, run.State, run.Err = d.Now(), store.DriftFailed, fmt.Errorf("%s on %s does not parse: %w", config.RepoFile, f.Branch, f.ConfigErr)
		return w.finish(ctx, rep, rep, run)
	case driftGone:
		return d.Store.ForgetDriftLayer(ctx, a.FullName, a.Target)
	}
	return w.plan(ctx, job, rep, run, f.Layer)
}

// look gathers what decides a drift run's start (driftFound), in that
// order and no further than the first fact that decides it.
func (w *driftRunWorker) look(ctx context.Context, a jobs.DriftRun) (f driftFound, rep *report.Reporter, err error) {
	d := w.d
	row, err := d.Store.DriftLayer(ctx, a.FullName, a.Target)
	if errors.Is(err, store.ErrNotFound) {
		return driftFound{Stopped: true}, nil, nil
	}
	if err != nil {
		return f, nil, err
	}
	f.Issue = row.Issue
	if f.Lock, err = w.lockOf(ctx, a); err != nil || f.Lock != nil {
		return f, nil, err
	}
	repo, err := d.Repo(a.Repo)
	if err != nil {
		return f, nil, err
	}
	if f.SHA, f.Branch, err = repo.BranchHead(ctx, ""); err != nil {
		return f, nil, err
	}
	if rep, err = d.Reporter(a.Repo); err != nil {
		return f, nil, err
	}
	cfg, err := worker.ReadRepoConfig(ctx, repo, f.SHA)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		f.ConfigErr = err
		return f, rep, nil
	}
	if err != nil {
		return f, nil, err
	}
	f.Layer, f.Asks = driftLayerOf(cfg, a.Target)
	return f, rep, nil
}

// plan plans the layer at the default branch's head, holding its slot,
// and reports what the plan found; a run that failed for a reason worth
// retrying returns its error to the queue instead.
func (w *driftRunWorker) plan(ctx context.Context, job *river.Job[jobs.DriftRun], rep *report.Reporter, run driftRun, layer config.Layer) error {
	a, d := job.Args, w.d
	release, err := waitSlot(ctx, d.Store, a.FullName, a.Target, worker.RunID(ctx))
	if err != nil {
		return err
	}
	defer release()
	// A PR may have taken the lock while this run waited for the slot.
	if skipped, err := w.skipLocked(ctx, a); skipped || err != nil {
		return err
	}
	log := d.LogWriter(ctx)
	defer log.Close()
	res, err := planLayer(ctx, d, a.Repo, run.SHA, specOf(layer), log, nil, nil)
	release()
	var sensitive []string
	if res != nil {
		sensitive = res.Sensitive
	}
	runRep := closeLog(ctx, d, log, rep, sensitive)
	if queue.LeaseLost(ctx) {
		return context.Cause(ctx) // another replica runs it again
	}
	outcome := planOutcomeOf(nil, err, job.Attempt, job.MaxAttempts)
	if outcome == planRetry {
		return err
	}
	run.At, run.State, run.Result, run.Err = d.Now(), driftStateOf(outcome, res), res, err
	return w.finish(context.WithoutCancel(ctx), rep, runRep, run)
}

// driftLayerOf finds a layer that asks for drift detection in the default
// branch's file (nil without one).
func driftLayerOf(cfg *config.Repo, name string) (config.Layer, bool) {
	if cfg != nil {
		for _, l := range cfg.Layers {
			if l.Name == name && l.Drift.On() {
				return l, true
			}
		}
	}
	return config.Layer{}, false
}

// skipLocked leaves a layer that a PR holds the lock of due again, for the
// next scan: the PR's plan, not the default branch, is what will be applied.
func (w *driftRunWorker) skipLocked(ctx context.Context, a jobs.DriftRun) (bool, error) {
	lock, err := w.lockOf(ctx, a)
	if err != nil || lock == nil {
		return false, err
	}
	return true, w.skip(ctx, a, lock)
}

// lockOf is the layer's lock, nil when it is free.
func (w *driftRunWorker) lockOf(ctx context.Context, a jobs.DriftRun) (*store.Lock, error) {
	lock, err := w.d.Store.Lock(ctx, a.FullName, a.Target)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return lock, err
}

// skip leaves a layer locked by a PR due again at once.
func (w *driftRunWorker) skip(ctx context.Context, a jobs.DriftRun, lock *store.Lock) error {
	zerolog.Ctx(ctx).Info().Int("locked_by", lock.PR).Msg("drift run skipped: the layer is locked")
	return w.d.Store.SetDriftDue(ctx, a.FullName, a.Target, w.d.Now())
}

// finish reports a run (issue first, so the check can name it) and
// records what it found. rep writes the issue's steps that carry no plan
// values; runRep also masks what this plan marks sensitive.
func (w *driftRunWorker) finish(ctx context.Context, rep, runRep *report.Reporter, run driftRun) error {
	d := w.d
	open := false
	if run.Issue != 0 && run.State != store.DriftFailed {
		var err error
		if open, err = rep.IssueOpen(ctx, run.Issue); err != nil {
			return err
		}
	}
	switch issueStepOf(run.State, run.Issue, open) {
	case issueOpen:
		n, err := runRep.CreateIssue(ctx, driftIssueTitle(run.Layer), driftIssueBody(run))
		if err != nil {
			return err
		}
		// Remembered at once: a retry of this job must find it, not open another.
		if err := d.Store.SetDriftIssue(ctx, run.Repo, run.Layer, n); err != nil {
			return err
		}
		run.Issue = n
	case issueUpdate:
		if err := runRep.EditIssue(ctx, run.Issue, driftIssueBody(run)); err != nil {
			return err
		}
		if _, err := runRep.Comment(ctx, run.Issue, driftStillComment(run)); err != nil {
			return err
		}
	case issueClose:
		if _, err := rep.Comment(ctx, run.Issue, driftGoneComment(run)); err != nil {
			return err
		}
		if err := rep.CloseIssue(ctx, run.Issue); err != nil {
			return err
		}
		run.Issue = 0
	case issueForget:
		run.Issue = 0
	}
	c := driftCheck(run)
	if run.Issue != 0 {
		c.Summary += fmt.Sprintf("\nReported in #%d.\n", run.Issue)
	}
	if _, err := runRep.CreateCheck(ctx, c); err != nil {
		return err
	}
	return d.Store.RecordDrift(ctx, run.Repo, run.Layer, run.State, run.SHA, run.Issue, run.At)
}
