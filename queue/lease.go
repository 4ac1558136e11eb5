package queue

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rs/zerolog"

	"strata.dev/strata/store"
)

// A run holds a lease on its work: its heartbeat, stamped by the database's
// clock. Another replica's reaper declares the run lost once the heartbeat
// is StaleAfter old, and retries or reports it (recovery.go). So that the
// two never overlap, a worker that cannot renew the lease stops the run
// while the lease still holds: it cancels the job after half of StaleAfter
// without a renewal, which leaves the other half for the job to stop. Tools
// get an interrupt and, a quarter of StaleAfter later, a kill (StopGrace);
// the last quarter is slack for the kill and the job's return.

// ErrLeaseLost is the cause a job's context is cancelled with when its run's
// lease could not be renewed: another replica may take the run over, so the
// job must stop and leave what follows to it.
var ErrLeaseLost = errors.New("the run's lease was lost: its heartbeat could not be renewed in the database")

// LeaseLost reports whether the job of ctx was cancelled because its lease
// was lost. Such a job reports nothing more: its outcome belongs to the
// replica that claims the run.
func LeaseLost(ctx context.Context) bool { return errors.Is(context.Cause(ctx), ErrLeaseLost) }

type graceKey struct{}

// StopGrace is how long the job of ctx may take to stop once its context is
// cancelled (a tool interrupted, then killed) without outliving its lease;
// 0 outside a job.
func StopGrace(ctx context.Context) time.Duration {
	d, _ := ctx.Value(graceKey{}).(time.Duration)
	return d
}

func (q *Queue) cancelAfter() time.Duration { return q.opts.StaleAfter / 2 }
func (q *Queue) stopGrace() time.Duration   { return q.opts.StaleAfter / 4 }

// holdLease renews the run's lease every heartbeat until stop is called.
// renewed is when the lease was last renewed (the run started). When no
// renewal has succeeded for cancelAfter, or the run was already claimed by
// another replica, it cancels the job with ErrLeaseLost. Durations are
// measured on this process's monotonic clock from the start of a renewal,
// which the database stamps no earlier, so the cancel always comes before
// the database's clock declares the run lost.
func (q *Queue) holdLease(ctx context.Context, runID int64, renewed time.Time, cancel context.CancelCauseFunc) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	// Renewals outlive the job's own cancel, but not the job.
	lctx, lcancel := context.WithCancel(context.WithoutCancel(ctx))
	go func() {
		defer close(exited)
		log := zerolog.Ctx(ctx)
		tick := time.NewTicker(q.opts.Heartbeat)
		defer tick.Stop()
		deadline := renewed.Add(q.cancelAfter())
		expire := time.NewTimer(time.Until(deadline))
		defer expire.Stop()
		for {
			select {
			case <-done:
				return
			case <-expire.C:
				cancel(fmt.Errorf("%w for %s", ErrLeaseLost, q.cancelAfter()))
				return
			case <-tick.C:
			}
			start := time.Now()
			// A slow renewal still renews; one that hangs (a dead
			// connection) must not hold up the cancel.
			rctx, rcancel := context.WithDeadline(lctx, deadline)
			err := q.store.Heartbeat(rctx, runID)
			rcancel()
			switch {
			case lctx.Err() != nil:
				return // the job ended
			case err == nil:
				deadline = start.Add(q.cancelAfter())
				expire.Reset(time.Until(deadline))
			case errors.Is(err, store.ErrRunEnded):
				// Claimed by another replica already: stop at once.
				cancel(fmt.Errorf("%w: %w", ErrLeaseLost, err))
				return
			default:
				log.Warn().Err(err).Int64("run", runID).Msg("renew the run's lease")
			}
		}
	}()
	return func() {
		close(done)
		lcancel()
		<-exited
	}
}
