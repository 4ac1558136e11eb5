package queue_test

import (
	"context"
	"testing"
	"time"

	"strata.dev/strata/store"
)

// An apply whose process died while Terraform held the state lock: when
// the run is declared lost, its lock goes, and a live run's stays.
func TestStateLocksOfALostRunAreReleased(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		jobID, err := f.q.Enqueue(ctx, sideArgs{Repo: "acme/infra"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.DB().ExecContext(ctx, f.st.Rebind(`UPDATE river_job SET state = 'running', attempt = 1 WHERE id = ?`), jobID); err != nil {
			t.Fatal(err)
		}
		lost, err := f.st.StartRun(ctx, store.Run{JobID: jobID, Attempt: 1, Kind: "side_effect", Repo: "acme/infra"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.DB().ExecContext(ctx, f.st.Rebind(`UPDATE runs SET heartbeat_at = ? WHERE id = ?`),
			time.Now().Add(-time.Minute).UnixMilli(), lost.ID); err != nil {
			t.Fatal(err)
		}
		live, err := f.st.StartRun(ctx, store.Run{JobID: jobID + 1000, Attempt: 1, Kind: "echo", Repo: "acme/infra"})
		if err != nil {
			t.Fatal(err)
		}
		net := store.StateKey{Repo: "acme/infra", Layer: "net"}
		db := store.StateKey{Repo: "acme/infra", Layer: "db"}
		if _, ok, err := f.st.LockState(ctx, net, store.StateLock{ID: "lost-lock", Info: []byte(`{"ID":"lost-lock"}`), RunID: lost.ID}); !ok || err != nil {
			t.Fatalf("lock: %v %v", ok, err)
		}
		if _, ok, err := f.st.LockState(ctx, db, store.StateLock{ID: "live-lock", Info: []byte(`{"ID":"live-lock"}`), RunID: live.ID}); !ok || err != nil {
			t.Fatalf("lock: %v %v", ok, err)
		}
		f.start(t)
		select {
		case <-f.intr.got:
		case <-time.After(20 * time.Second):
			t.Fatal("the lost run was not recovered")
		}
		// The lock is released before the interrupted report is enqueued.
		if l, err := f.st.StateLockOf(ctx, net); l != nil || err != nil {
			t.Fatalf("the lost run's state lock stayed: %+v, %v", l, err)
		}
		if l, _ := f.st.StateLockOf(ctx, db); l == nil {
			t.Fatal("a live run's state lock was released")
		}
	})
}
