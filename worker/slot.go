package worker

import (
	"context"
	"fmt"
	"sync"
	"time"

	"strata.dev/strata/store"
)

// slotPoll is how often a run waiting for its slot asks again.
const slotPoll = 100 * time.Millisecond

// HoldSlot polls take until the run holds the slot of what ("layer",
// "release"), logging when it took it, and returns the release: it logs and
// frees the slot once, however often it is called. Outside a run (runID 0)
// there is no slot to wait for. Slots are tied to the run record, whose
// heartbeat the queue keeps; a run lost with its process frees its slot.
func HoldSlot(ctx context.Context, st *store.Store, what string, runID int64,
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
			Warn(ctx, st.AppendLog(ctx, runID, fmt.Sprintf("[strata] %s slot taken at %d\n", what, time.Now().UnixMilli())), "log the slot taken")
			var once sync.Once
			return func() {
				once.Do(func() {
					ctx := context.WithoutCancel(ctx)
					Warn(ctx, st.AppendLog(ctx, runID, fmt.Sprintf("[strata] %s slot released at %d\n", what, time.Now().UnixMilli())), "log the slot released")
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
