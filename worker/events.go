package worker

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/jobs"
)

// PullRequestFunc reacts to a PR event for one feature. It must be safe to
// run twice: a failure of any feature retries the whole event job.
type PullRequestFunc func(ctx context.Context, d *Deps, ev jobs.PullRequest) error

// PushFunc reacts to a push to the default branch for one feature, with the
// same rule.
type PushFunc func(ctx context.Context, d *Deps, ev jobs.Push) error

var (
	pullRequestFuncs []PullRequestFunc
	pushFuncs        []PushFunc
)

// closedWhy says, in a comment's words, how a PR was closed.
func closedWhy(merged bool) string {
	if merged {
		return "the pull request was merged"
	}
	return "the pull request was closed"
}

// OnPullRequest registers a feature's reaction to PR events.
func OnPullRequest(f PullRequestFunc) { pullRequestFuncs = append(pullRequestFuncs, f) }

// OnPush registers a feature's reaction to pushes to the default branch.
func OnPush(f PushFunc) { pushFuncs = append(pushFuncs, f) }

// PullRequestWorker gives a PR event to every feature.
type PullRequestWorker struct {
	river.WorkerDefaults[jobs.PullRequest]
	d *Deps
}

func (w *PullRequestWorker) Timeout(*river.Job[jobs.PullRequest]) time.Duration {
	return jobs.EventTimeout
}

func (w *PullRequestWorker) Work(ctx context.Context, job *river.Job[jobs.PullRequest]) error {
	var errs []error
	for _, f := range pullRequestFuncs {
		errs = append(errs, f(ctx, w.d, job.Args))
	}
	return errors.Join(errs...)
}

// PushWorker gives a push to every feature.
type PushWorker struct {
	river.WorkerDefaults[jobs.Push]
	d *Deps
}

func (w *PushWorker) Timeout(*river.Job[jobs.Push]) time.Duration { return jobs.EventTimeout }

func (w *PushWorker) Work(ctx context.Context, job *river.Job[jobs.Push]) error {
	var errs []error
	for _, f := range pushFuncs {
		errs = append(errs, f(ctx, w.d, job.Args))
	}
	return errors.Join(errs...)
}
