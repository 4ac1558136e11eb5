package queue_test

import (
	"context"
	"log/slog"
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

// The job that recovers a lost run cannot be enqueued (a full disk, a
// replica dying after its claim) -> the run is not claimed either: it stays
// running for the next reaper, which recovers it once the queue takes jobs
// again. Claimed apart from its recovery, it would be lost and never
// reported, and River's own rescue of its job is ignored for a lost run.
func TestALostRunIsClaimedOnlyWithItsRecovery(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		failed := make(chan struct{}, 1)
		f := newLoggedFixture(t, d, slog.New(onMessage{"recover lost run", failed}))
		ctx := context.Background()
		jobID, err := f.q.Enqueue(ctx, sideArgs{Repo: "acme/infra"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		exec := func(q string, args ...any) {
			t.Helper()
			if _, err := f.st.DB().ExecContext(ctx, f.st.Rebind(q), args...); err != nil {
				t.Fatal(err)
			}
		}
		exec(`UPDATE river_job SET state = 'running', attempt = 1 WHERE id = ?`, jobID)
		lost, err := f.st.StartRun(ctx, store.Run{JobID: jobID, Attempt: 1, Kind: "side_effect", Repo: "acme/infra"})
		if err != nil {
			t.Fatal(err)
		}
		exec(`UPDATE runs SET heartbeat_at = ? WHERE id = ?`, time.Now().Add(-time.Minute).UnixMilli(), lost.ID)
		// The queue refuses every new job.
		if d == store.SQLite {
			exec(`CREATE TRIGGER refuse_jobs BEFORE INSERT ON river_job BEGIN SELECT RAISE(ABORT, 'the disk is full'); END`)
		} else {
			exec(`CREATE FUNCTION refuse_jobs() RETURNS trigger AS $$ BEGIN RAISE EXCEPTION 'the disk is full'; END $$ LANGUAGE plpgsql`)
			exec(`CREATE TRIGGER refuse_jobs BEFORE INSERT ON river_job FOR EACH ROW EXECUTE FUNCTION refuse_jobs()`)
		}
		f.start(t)
		select {
		case <-failed:
		case <-time.After(20 * time.Second):
			t.Fatal("the reaper never tried to recover the lost run")
		}
		if r, err := f.st.Run(ctx, lost.ID); err != nil || r.Status != store.RunRunning {
			t.Fatalf("after a recovery that could not be enqueued the run is %+v, %v; want it still running, unclaimed", r, err)
		}
		if d == store.SQLite {
			exec(`DROP TRIGGER refuse_jobs`)
		} else {
			exec(`DROP TRIGGER refuse_jobs ON river_job`)
		}
		select {
		case got := <-f.intr.got:
			if got.RunID != lost.ID {
				t.Fatalf("interrupted report for run %d, want %d", got.RunID, lost.ID)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the lost run was never recovered once the queue took jobs again")
		}
		if r, err := f.st.Run(ctx, lost.ID); err != nil || r.Status != store.RunInterrupted || r.Summary != "interrupted: the server stopped while this ran" {
			t.Fatalf("the recovered run is %+v, %v; want interrupted, and saying so", r, err)
		}
	})
}

// onMessage signals once on the first log record with its message.
type onMessage struct {
	msg string
	hit chan struct{}
}

func (h onMessage) Enabled(context.Context, slog.Level) bool { return true }
func (h onMessage) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		select {
		case h.hit <- struct{}{}:
		default:
		}
	}
	return nil
}
func (h onMessage) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h onMessage) WithGroup(string) slog.Handler      { return h }
