package queue

import (
	"context"
	"encoding/json"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/rs/zerolog"

	"strata.dev/strata/store"
)

// Recovery says what happens to a job whose process died while it ran.
type Recovery int

const (
	// Retry runs the job again: it only reads, or is idempotent (a plan, a
	// hydration, a report).
	Retry Recovery = iota
	// Interrupt never runs it again: it had side effects (an apply, a
	// takeover, a Helm upgrade). An Interrupted job reports it instead.
	Interrupt
)

// Policy is a job kind's recovery policy.
type Policy struct{ Recovery Recovery }

// SetPolicy declares how a kind of job is recovered. Kinds without a policy
// are retried.
func (q *Queue) SetPolicy(kind string, p Policy) { q.policies[kind] = p }

// Interrupted is enqueued for a job with side effects whose process died:
// its worker tells the user what was interrupted and what to check.
type Interrupted struct {
	JobKind string          `json:"job_kind"`
	JobID   int64           `json:"job_id"`
	RunID   int64           `json:"run_id"`
	Args    json.RawMessage `json:"args"`
}

func (Interrupted) Kind() string { return "interrupted" }

func (Interrupted) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 5} }

// rawArgs re-enqueues a job's stored arguments unchanged.
type rawArgs struct {
	kind string
	args json.RawMessage
}

func (r rawArgs) Kind() string                 { return r.kind }
func (r rawArgs) MarshalJSON() ([]byte, error) { return r.args, nil }

type runKey struct{}

// RunFrom returns the run record of the job being worked.
func RunFrom(ctx context.Context) *store.Run {
	r, _ := ctx.Value(runKey{}).(*store.Run)
	return r
}

// tracker records every attempt as a run with a heartbeat, so a replica can
// tell a job whose process died from one that is slow, and holds the run's
// lease while the job works (lease.go).
type tracker struct {
	river.WorkerMiddlewareDefaults
	q *Queue
}

func (t *tracker) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	st := t.q.store
	abandoned, err := st.JobAbandoned(ctx, job.ID)
	if err != nil {
		return err
	}
	if abandoned {
		// A replica declared an earlier attempt lost and already retried or
		// reported it; River's own rescuer brought this one back late.
		return nil
	}
	meta := metaOf(job)
	// Every log line of the job names what it works on, once, here.
	ctx = t.q.opts.Log.With().Str("kind", job.Kind).Int64("job", job.ID).Int("attempt", job.Attempt).
		Str("repo", meta.Repo).Int("pr", meta.PR).Str("target", meta.Target).Logger().WithContext(ctx)
	started := time.Now()
	// A snooze (a wait for GitHub's rate limit, ratelimit.go) gives River's
	// attempt back, so the run counts the snoozes too: each time the job is
	// worked is a run of its own, with its own lease.
	run, err := st.StartRun(ctx, store.Run{JobID: job.ID, Attempt: job.Attempt + snoozesOf(job), Kind: job.Kind,
		Repo: meta.Repo, PR: meta.PR, Target: meta.Target, HeadSHA: meta.HeadSHA})
	if err != nil {
		return err
	}
	jctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := t.q.holdLease(ctx, run.ID, started, cancel)
	jctx = context.WithValue(context.WithValue(jctx, runKey{}, run), graceKey{}, t.q.stopGrace())
	err = doInner(jctx)
	stop()
	if err != nil && LeaseLost(jctx) {
		// The run stays "running" in the store: a reaper claims it once its
		// heartbeat is stale and recovers it by its kind's policy, exactly
		// as if this process had died. River must not retry it as well.
		zerolog.Ctx(ctx).Warn().Err(context.Cause(jctx)).Int64("run", run.ID).Msg("run cancelled: its lease was lost")
		return river.JobCancel(context.Cause(jctx))
	}
	status, summary := store.RunSucceeded, ""
	wait, snooze := limitSnooze(err, job, time.Now())
	switch {
	case snooze:
		status, summary = store.RunFailed, "GitHub's rate limit ran out; the job runs again when it resets"
		zerolog.Ctx(ctx).Warn().Err(err).Time("retry_at", time.Now().Add(wait)).
			Msg("GitHub's rate limit ran out: the job waits for its reset, without spending an attempt")
	case err != nil:
		status = store.RunFailed
	}
	// A conclusion or summary the worker wrote is kept (FinishRun).
	if ferr := st.FinishRun(context.WithoutCancel(ctx), run.ID, status, "", summary); ferr != nil {
		// The reaper will find the run still running and recover it.
		zerolog.Ctx(ctx).Warn().Err(ferr).Int64("run", run.ID).Msg("record the run's end")
	}
	if snooze {
		return river.JobSnooze(wait)
	}
	return err
}

// reap recovers runs whose heartbeat stopped: their process died. Each is
// claimed in the transaction that enqueues its recovery, so with several
// replicas each lost run is recovered once, and a replica that dies midway
// leaves the run to the next reaper rather than claimed and never recovered.
func (q *Queue) reap(ctx context.Context) {
	lost, err := q.store.LostRuns(ctx, q.opts.StaleAfter)
	if err != nil {
		q.opts.Logger.Error("reap lost runs", "err", err)
		return
	}
	for _, run := range lost {
		q.recover(ctx, run)
	}
}

func (q *Queue) recover(ctx context.Context, run *store.Run) {
	lost, err := q.b.jobGet(ctx, run.JobID)
	if err != nil {
		q.opts.Logger.Error("recover lost run: load job", "run", run.ID, "job", run.JobID, "err", err)
		return
	}
	// Its stored arguments (SQLite keeps them as binary JSONB, so the
	// table cannot be read directly), on the queue it was on.
	args := json.RawMessage(lost.EncodedArgs)
	status, summary := store.RunLost, ""
	job := river.InsertManyParams{Args: rawArgs{kind: run.Kind, args: args}, InsertOpts: &river.InsertOpts{Queue: lost.Queue, MaxAttempts: lost.MaxAttempts}}
	if q.policies[run.Kind].Recovery == Interrupt {
		status, summary = store.RunInterrupted, "interrupted: the server stopped while this ran"
		job = river.InsertManyParams{Args: Interrupted{JobKind: run.Kind, JobID: run.JobID, RunID: run.ID, Args: args}}
	}
	claimed, err := q.b.atomically(ctx, gate{stmts: q.store.ClaimLostRun(run.ID, q.opts.StaleAfter, status, summary), rows: 1}, []river.InsertManyParams{job})
	switch {
	case err != nil:
		q.opts.Logger.Error("recover lost run", "run", run.ID, "kind", run.Kind, "err", err)
	case claimed:
		q.opts.Logger.Warn("recovered run lost with its process", "run", run.ID, "kind", run.Kind, "job", run.JobID, "as", status)
	}
}
