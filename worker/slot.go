package worker

import (
	"context"
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// slotPoll is how often a run waiting for its slot asks again.
const slotPoll = 100 * time.Millisecond

// HoldSlot polls take until the run holds the slot of what ("layer",
// "release"), and returns the release: it frees the slot once, however often
// it is called. Outside a run (runID 0) there is no slot to wait for. Slots
// are tied to the run record, whose heartbeat the queue keeps; a run lost
// with its process frees its slot.
//
// When a run took and let go its slot goes to the server's log, at debug
// level: the run's own log is its user's, and a slot is Strata's business.
func HoldSlot(ctx context.Context, what string, runID int64,
	take func(context.Context) (bool, error), free func(context.Context) error) (func(), error) {
	if runID == 0 {
		return func() {}, nil
	}
	for {
		ok, err := take(ctx)
		if err != nil {
			return nil, err
		}
		if ok {
			logSlot(ctx, what, runID, "slot taken")
			var once sync.Once
			return func() {
				once.Do(func() {
					ctx := context.WithoutCancel(ctx)
					logSlot(ctx, what, runID, "slot released")
					// A slot not freed here is freed with its run's record.
					Warn(ctx, free(ctx), "free the "+what+" slot")
				})
			}, nil
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(slotPoll):
		}
	}
}

// logSlot records a slot's change in the server's log, with the time in
// Unix milliseconds that the tests of one run per layer compare.
func logSlot(ctx context.Context, what string, runID int64, msg string) {
	zerolog.Ctx(ctx).Debug().Str("slot", what).Int64("run", runID).Int64("at_ms", time.Now().UnixMilli()).Msg(msg)
}
