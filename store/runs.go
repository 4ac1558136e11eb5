package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Run states. A run is one attempt of one job; "lost" means its process died
// (no heartbeat) and someone else took over what followed.
const (
	RunRunning     = "running"
	RunSucceeded   = "succeeded"
	RunFailed      = "failed"
	RunLost        = "lost"
	RunInterrupted = "interrupted"
)

// Run is the record of one attempt of a job, with its log.
type Run struct {
	ID         int64
	JobID      int64
	Attempt    int
	Kind       string
	Repo       string
	PR         int
	Target     string
	HeadSHA    string
	Status     string
	Conclusion string
	Summary    string
	// Log is the run's log; Run reads it (run_log_chunks), the lists
	// leave it empty.
	Log         string
	CheckRunID  int64
	StartedAt   time.Time
	HeartbeatAt time.Time
	FinishedAt  time.Time
}

const runColumns = `id, job_id, attempt, kind, repo, pr, target, head_sha, status, conclusion,
	summary, log, check_run_id, started_at, heartbeat_at, finished_at`

func scanRun(row interface{ Scan(...any) error }) (*Run, error) {
	var r Run
	var started, beat, finished int64
	err := row.Scan(&r.ID, &r.JobID, &r.Attempt, &r.Kind, &r.Repo, &r.PR, &r.Target, &r.HeadSHA,
		&r.Status, &r.Conclusion, &r.Summary, &r.Log, &r.CheckRunID, &started, &beat, &finished)
	if err != nil {
		return nil, err
	}
	r.StartedAt, r.HeartbeatAt, r.FinishedAt = fromMillis(started), fromMillis(beat), fromMillis(finished)
	return &r, nil
}

// StartRun records that an attempt of a job began, its lease starting now by
// the database's clock. Starting the same attempt twice returns the existing
// run. Every job starts one, so it is one statement (the insert returns the
// run) but for the second start of an attempt.
func (s *Store) StartRun(ctx context.Context, r Run) (*Run, error) {
	run, err := scanRun(s.queryRow(ctx, `INSERT INTO runs (job_id, attempt, kind, repo, pr, target, head_sha, status,
		started_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, `+s.dbNow()+`, `+s.dbNow()+`)
		ON CONFLICT (job_id, attempt) DO NOTHING RETURNING `+runColumns,
		r.JobID, r.Attempt, r.Kind, r.Repo, r.PR, r.Target, r.HeadSHA, RunRunning))
	if errors.Is(err, sql.ErrNoRows) { // the attempt's run was there already
		run, err = scanRun(s.queryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE job_id = ? AND attempt = ?`, r.JobID, r.Attempt))
	}
	if err != nil {
		return nil, fmt.Errorf("start run of job %d: %w", r.JobID, err)
	}
	return run, nil
}

// Run returns one run by id, with its whole log.
func (s *Store) Run(ctx context.Context, id int64) (*Run, error) {
	r, err := s.RunRecord(ctx, id)
	if err != nil {
		return nil, err
	}
	r.Log, err = s.Log(ctx, id)
	return r, err
}

// RunRecord returns one run by id without its log, for a reader that
// streams the log (WriteLog) instead of holding it.
func (s *Store) RunRecord(ctx context.Context, id int64) (*Run, error) {
	r, err := scanRun(s.queryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return r, err
}

// RunsOfJob lists the attempts of a job, oldest first.
func (s *Store) RunsOfJob(ctx context.Context, jobID int64) ([]*Run, error) {
	rows, err := s.query(ctx, `SELECT `+runColumns+` FROM runs WHERE job_id = ? ORDER BY attempt`, jobID)
	if err != nil {
		return nil, err
	}
	return collectRuns(rows)
}

// JobAbandoned reports whether an earlier attempt of the job was declared lost
// or interrupted: whatever follows such a job was already taken care of, so a
// late rerun by the queue's own rescuer must do nothing.
func (s *Store) JobAbandoned(ctx context.Context, jobID int64) (bool, error) {
	var n int
	err := s.queryRow(ctx, `SELECT count(*) FROM runs WHERE job_id = ? AND status IN (?, ?)`,
		jobID, RunLost, RunInterrupted).Scan(&n)
	return n > 0, err
}

// ErrRunEnded is returned by Heartbeat for a run that is no longer running:
// another replica declared it lost (and retried or reported it), so its
// lease is gone for good.
var ErrRunEnded = errors.New("the run is no longer running")

// Heartbeat renews a running run's lease, by the database's clock: replicas
// whose clocks disagree still agree on which runs are alive.
func (s *Store) Heartbeat(ctx context.Context, id int64) error {
	res, err := s.exec(ctx, `UPDATE runs SET heartbeat_at = `+s.dbNow()+` WHERE id = ? AND status = ?`, id, RunRunning)
	if err != nil {
		return fmt.Errorf("heartbeat of run %d: %w", id, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("heartbeat of run %d: %w", id, err)
	} else if n == 0 {
		return fmt.Errorf("heartbeat of run %d: %w", id, ErrRunEnded)
	}
	return nil
}

// SetRunCheck remembers the check run that mirrors this run and, once the
// check is completed, its conclusion (empty leaves the one recorded).
func (s *Store) SetRunCheck(ctx context.Context, id, checkRunID int64, conclusion string) error {
	_, err := s.exec(ctx, `UPDATE runs SET check_run_id = ?, conclusion = CASE WHEN ? = '' THEN conclusion ELSE ? END WHERE id = ?`,
		checkRunID, conclusion, conclusion, id)
	return err
}

// FinishRun records the outcome of a run that is still running; a run already
// declared lost keeps that status. A conclusion or summary its worker
// already wrote (SetRunCheck) is kept: conclusion and summary fill only
// what is empty. One statement, as every job ends one.
func (s *Store) FinishRun(ctx context.Context, id int64, status, conclusion, summary string) error {
	_, err := s.exec(ctx, `UPDATE runs SET status = ?,
		conclusion = CASE WHEN conclusion = '' THEN ? ELSE conclusion END,
		summary = CASE WHEN summary = '' THEN ? ELSE summary END,
		finished_at = `+s.dbNow()+`
		WHERE id = ? AND status = ?`, status, conclusion, summary, id, RunRunning)
	return err
}

// LostRuns returns the running runs whose heartbeat is older than
// staleAfter: their process died, or lost its lease. Age is measured by the
// database's clock, the one heartbeats are stamped with, so a replica whose
// clock runs ahead cannot find runs that are alive. Nothing is claimed: the
// queue claims each with ClaimLostRun, in the transaction that enqueues what
// recovers it.
func (s *Store) LostRuns(ctx context.Context, staleAfter time.Duration) ([]*Run, error) {
	runs, err := queryAll(ctx, s, scanRun, `SELECT `+runColumns+` FROM runs
		WHERE status = ? AND heartbeat_at < `+s.dbNow()+` - ? ORDER BY id`, RunRunning, staleAfter.Milliseconds())
	if err != nil {
		return nil, fmt.Errorf("find lost runs: %w", err)
	}
	return runs, nil
}

// Statement is one SQL statement, with ? placeholders, that a caller runs in
// a transaction of its own (the queue's, which also enqueues jobs).
type Statement struct {
	SQL  string
	Args []any
}

// ClaimLostRun returns the statements that end a lost run, to run in one
// transaction. The first is the claim: it changes the run to status
// (RunLost, to be retried, or RunInterrupted, with summary) only while it is
// still running with a heartbeat older than staleAfter, so on several
// replicas exactly one sees a row changed, and the others must stop there.
// The rest free what the run held and its process cannot: Terraform's state
// locks (a lock left by a lost run would strand its layer, docs/state.md) and
// the state credentials it was given.
func (s *Store) ClaimLostRun(id int64, staleAfter time.Duration, status, summary string) []Statement {
	// An empty summary keeps the one the run wrote.
	claim := Statement{`UPDATE runs SET status = ?, summary = COALESCE(NULLIF(?, ''), summary), finished_at = ` + s.dbNow() + `
		WHERE id = ? AND status = ? AND heartbeat_at < ` + s.dbNow() + ` - ?`,
		[]any{status, summary, id, RunRunning, staleAfter.Milliseconds()}}
	return []Statement{claim,
		{`DELETE FROM state_locks WHERE run_id = ?`, []any{id}},
		{`DELETE FROM state_credentials WHERE run_id = ?`, []any{id}},
	}
}

// LatestRun returns the newest run for a repo and target of a kind.
func (s *Store) LatestRun(ctx context.Context, repo, kind, target string) (*Run, error) {
	r, err := scanRun(s.queryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE repo = ? AND kind = ? AND target = ?
		ORDER BY id DESC LIMIT 1`, repo, kind, target))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return r, err
}

func collectRuns(rows *sql.Rows) ([]*Run, error) { return collect(rows, scanRun) }

// ErrNotFound is returned when a looked-up record does not exist.
var ErrNotFound = errors.New("not found")

// dbNow is the database's clock in Unix milliseconds, as SQL: run leases
// (heartbeat_at, and the cutoff that declares a run lost) are read from one
// clock, not from each replica's. PostgreSQL's clock_timestamp is the time
// of the statement (now() would be the start of its transaction).
func (s *Store) dbNow() string {
	if s.dialect == Postgres {
		return `(extract(epoch FROM clock_timestamp()) * 1000)::bigint`
	}
	return `CAST(round(unixepoch('subsec') * 1000) AS INTEGER)`
}

// NowSQL is the database's clock in Unix milliseconds, as SQL, for queries
// outside the store that compare with its times (queue.Pending).
func (s *Store) NowSQL() string { return s.dbNow() }
