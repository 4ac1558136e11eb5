package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
)

// Periodic is a scan that the queue's leader enqueues on a schedule: one job
// of Args every Every, and at start too when AtStart, so that a server that
// restarts more often than Every still runs it. Its worker goes over what is
// due with Each. Features declare their scans as these values, so that every
// schedule reads (and is tested) as one table; the runtime makes River's
// periodic jobs of them.
type Periodic struct {
	// ID names the scan for River, which enqueues one job per ID per
	// schedule tick across replicas; unique among the features.
	ID      string
	Every   time.Duration
	AtStart bool
	Args    river.JobArgs
}

func (p Periodic) job() *river.PeriodicJob {
	args := p.Args
	return river.NewPeriodicJob(river.PeriodicInterval(p.Every),
		func() (river.JobArgs, *river.InsertOpts) { return args, nil },
		&river.PeriodicJobOpts{ID: p.ID, RunOnStart: p.AtStart})
}

// Each is a scan's fan-out: f for each item in order, every one even when
// some fail, so that one repository that errs does not starve the others
// (the job retries, and f is safe to run again). It stops before the next
// item once ctx is done (the job's timeout or the process stopping), rather
// than fail each remaining item in turn. The errors come back joined.
func Each[T any](ctx context.Context, items []T, f func(context.Context, T) error) error {
	var errs []error
	for i, it := range items {
		if err := ctx.Err(); err != nil {
			errs = append(errs, fmt.Errorf("%d of %d left: %w", len(items)-i, len(items), err))
			break
		}
		errs = append(errs, f(ctx, it))
	}
	return errors.Join(errs...)
}
