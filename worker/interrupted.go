package worker

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/queue"
)

// InterruptedFunc tells the user that a job with side effects was cut short
// by its process dying, and what to check. Features register one per kind.
type InterruptedFunc func(ctx context.Context, d *Deps, job queue.Interrupted) error

var interrupted = map[string]InterruptedFunc{}

// HandleInterrupted registers the report of an interrupted job kind.
func HandleInterrupted(kind string, f InterruptedFunc) { interrupted[kind] = f }

// InterruptedWorker reports jobs that must not be retried after a crash.
type InterruptedWorker struct {
	river.WorkerDefaults[queue.Interrupted]
	d *Deps
}

func (w *InterruptedWorker) Timeout(*river.Job[queue.Interrupted]) time.Duration {
	return 2 * time.Minute
}

func (w *InterruptedWorker) Work(ctx context.Context, job *river.Job[queue.Interrupted]) error {
	f, ok := interrupted[job.Args.JobKind]
	if !ok {
		w.d.Logger.Warn().Str("kind", job.Args.JobKind).Int64("job", job.Args.JobID).Msg("job interrupted by a crash; nothing registered to report it")
		return nil
	}
	return f(ctx, w.d, job.Args)
}
