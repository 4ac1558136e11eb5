package queue

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// JobInfo is a job as the web UI's queue page shows it.
type JobInfo struct {
	ID    int64
	Kind  string
	State rivertype.JobState
	// Repo, PR and Target are what the job works on, from its arguments;
	// Repo is "" for Strata's own jobs (periodic scans, repairs).
	Repo, Target string
	PR           int
	User         string
	// Command is a command job's command line, as typed.
	Command     string
	Attempt     int
	MaxAttempts int
	// At is when it runs next (queued), began (running) or ended
	// (failed).
	At time.Time
	// Error is the last attempt's error message.
	Error string
}

// JobFilter says which jobs Jobs lists.
type JobFilter struct {
	// Repos are the repositories (full names, any case) whose jobs are
	// listed, with Strata's own jobs, which name no repository.
	Repos []string
	// FailedSince: jobs that failed for good (discarded) or were cancelled
	// are listed when they ended after it.
	FailedSince time.Time
	// Limit caps each of the two lists (waiting or running, and failed);
	// 200 when zero.
	Limit int
}

// Jobs lists the jobs still to run or running, newest first, then those
// that failed since f.FailedSince, latest first.
func (q *Queue) Jobs(ctx context.Context, f JobFilter) ([]JobInfo, error) {
	if f.Limit <= 0 {
		f.Limit = 200
	}
	// The repository is in the arguments, or for an interrupted run's
	// report in the arguments of the job it reports. "->>" reads JSON on
	// PostgreSQL (jsonb) and SQLite (JSONB blob) alike.
	where := []string{`coalesce(args ->> 'repo', args -> 'args' ->> 'repo') IS NULL`}
	named := river.NamedArgs{}
	for i, r := range f.Repos {
		name := fmt.Sprintf("repo%d", i)
		where = append(where, `lower(coalesce(args ->> 'repo', args -> 'args' ->> 'repo')) = @`+name)
		named[name] = strings.ToLower(r)
	}
	pred := "(" + strings.Join(where, " OR ") + ")"
	active, err := q.b.jobList(ctx, river.NewJobListParams().
		States(rivertype.JobStateAvailable, rivertype.JobStateScheduled, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateRetryable).
		OrderBy(river.JobListOrderByID, river.SortOrderDesc).First(f.Limit).Where(pred, named))
	if err != nil {
		return nil, fmt.Errorf("list queued jobs: %w", err)
	}
	failed, err := q.b.jobList(ctx, river.NewJobListParams().
		States(rivertype.JobStateDiscarded, rivertype.JobStateCancelled).
		OrderBy(river.JobListOrderByFinalizedAt, river.SortOrderDesc).First(f.Limit).Where(pred, named))
	if err != nil {
		return nil, fmt.Errorf("list failed jobs: %w", err)
	}
	var ended []JobInfo
	endedIDs := map[int64]bool{}
	for _, j := range failed {
		if j.FinalizedAt == nil || j.FinalizedAt.Before(f.FailedSince) {
			break // the rest ended earlier still
		}
		ended = append(ended, infoOf(j))
		endedIDs[j.ID] = true
	}
	out := make([]JobInfo, 0, len(active)+len(ended))
	for _, j := range active {
		// A job may end between the two reads: the later one says how.
		if !endedIDs[j.ID] {
			out = append(out, infoOf(j))
		}
	}
	return append(out, ended...), nil
}

// JobOrigin is what a job's arguments say of where it comes from and
// reports to.
type JobOrigin struct {
	// User is who asked for it.
	User string
	// CheckRunID is the check it reports to, when it has one of its own.
	CheckRunID int64
}

// JobOrigins returns the origins of the jobs River still keeps (it deletes
// finished ones after a while), by job id.
func (q *Queue) JobOrigins(ctx context.Context, ids []int64) (map[int64]JobOrigin, error) {
	out := map[int64]JobOrigin{}
	if len(ids) == 0 {
		return out, nil
	}
	jobs, err := q.b.jobList(ctx, river.NewJobListParams().IDs(ids...).First(len(ids)))
	if err != nil {
		return nil, fmt.Errorf("read jobs' origins: %w", err)
	}
	for _, j := range jobs {
		a := argsOf(j)
		out[j.ID] = JobOrigin{User: a.User, CheckRunID: a.CheckRunID}
	}
	return out, nil
}

type jobArgs struct {
	jobMeta
	User       string `json:"user"`
	CheckRunID int64  `json:"check_run_id"`
	// Body is a command job's command line.
	Body string `json:"body"`
	// Args are the arguments of the job an Interrupted job reports.
	Args json.RawMessage `json:"args"`
}

func argsOf(j *rivertype.JobRow) jobArgs {
	var a jobArgs
	_ = json.Unmarshal(j.EncodedArgs, &a)
	if a.Repo == "" && len(a.Args) > 0 {
		var inner jobArgs
		_ = json.Unmarshal(a.Args, &inner)
		inner.Args = nil
		return inner
	}
	return a
}

func infoOf(j *rivertype.JobRow) JobInfo {
	a := argsOf(j)
	info := JobInfo{ID: j.ID, Kind: j.Kind, State: j.State, Repo: a.Repo, PR: a.PR, Target: a.Target, User: a.User, Command: a.Body,
		Attempt: j.Attempt, MaxAttempts: j.MaxAttempts, At: j.ScheduledAt}
	switch {
	case j.State == rivertype.JobStateRunning && j.AttemptedAt != nil:
		info.At = *j.AttemptedAt
	case j.FinalizedAt != nil:
		info.At = *j.FinalizedAt
	}
	if n := len(j.Errors); n > 0 {
		info.Error = j.Errors[n-1].Error
	}
	return info
}

func (b *riverBackend[TTx]) jobList(ctx context.Context, params *river.JobListParams) ([]*rivertype.JobRow, error) {
	res, err := b.client.JobList(ctx, params)
	if err != nil {
		return nil, err
	}
	return res.Jobs, nil
}
