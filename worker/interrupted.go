package worker

import (
	"context"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/queue"
)

// InterruptedWorker reports jobs that must not be retried after a crash.
type InterruptedWorker struct {
	river.WorkerDefaults[queue.Interrupted]
	rt *Runtime
}

func (w *InterruptedWorker) Timeout(*river.Job[queue.Interrupted]) time.Duration {
	return 2 * time.Minute
}

func (w *InterruptedWorker) Work(ctx context.Context, job *river.Job[queue.Interrupted]) error {
	f, ok := w.rt.interrupted[job.Args.JobKind]
	if !ok {
		w.rt.d.Logger.Warn().Str("kind", job.Args.JobKind).Int64("job", job.Args.JobID).Msg("job interrupted by a crash; nothing registered to report it")
		return nil
	}
	return f(ctx, job.Args)
}
