package worker

import (
	"context"
	"errors"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/jobs"
)

// PullRequestWorker gives a PR event to every feature.
type PullRequestWorker struct {
	river.WorkerDefaults[jobs.PullRequest]
	rt *Runtime
}

func (w *PullRequestWorker) Timeout(*river.Job[jobs.PullRequest]) time.Duration {
	return jobs.EventTimeout
}

func (w *PullRequestWorker) Work(ctx context.Context, job *river.Job[jobs.PullRequest]) error {
	var errs []error
	for _, f := range w.rt.features {
		if f.OnPullRequest != nil {
			errs = append(errs, f.OnPullRequest(ctx, job.Args))
		}
	}
	return errors.Join(errs...)
}

// PushWorker gives a push to every feature.
type PushWorker struct {
	river.WorkerDefaults[jobs.Push]
	rt *Runtime
}

func (w *PushWorker) Timeout(*river.Job[jobs.Push]) time.Duration { return jobs.EventTimeout }

func (w *PushWorker) Work(ctx context.Context, job *river.Job[jobs.Push]) error {
	var errs []error
	for _, f := range w.rt.features {
		if f.OnPush != nil {
			errs = append(errs, f.OnPush(ctx, job.Args))
		}
	}
	return errors.Join(errs...)
}
