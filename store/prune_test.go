package store_test

import (
	"context"
	"testing"
	"time"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// A month of deliveries, runs with their logs and plan batches -> Prune
// deletes what is older than the retention, and keeps what is recent,
// running, or holding a slot.
func TestPruneDeletesOldRecordsOnly(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			now := time.Now()
			old, recent := now.Add(-31*24*time.Hour), now.Add(-time.Hour)
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := st.DB().ExecContext(ctx, st.Rebind(q), args...); err != nil {
					t.Fatal(err)
				}
			}
			record := store.RecordDeliveries([]store.Delivery{
				{ID: "old-delivery", Event: "issue_comment", ReceivedAt: old.UnixMilli()},
				{ID: "new-delivery", Event: "issue_comment", ReceivedAt: recent.UnixMilli()},
			})
			exec(record.SQL, record.Args...)

			run := func(job int64, started time.Time, finish bool) int64 {
				t.Helper()
				r, err := st.StartRun(ctx, store.Run{JobID: job, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra", Target: "net"})
				if err != nil {
					t.Fatal(err)
				}
				if err := st.AppendLog(ctx, r.ID, "a month of logs\n"); err != nil {
					t.Fatal(err)
				}
				if finish {
					if err := st.FinishRun(ctx, r.ID, store.RunSucceeded, "success", ""); err != nil {
						t.Fatal(err)
					}
				}
				exec(`UPDATE runs SET started_at = ? WHERE id = ?`, started.UnixMilli(), r.ID)
				return r.ID
			}
			oldDone := run(1, old, true)
			oldRunning := run(2, old, false)
			oldInLayerSlot := run(3, old, true)
			oldInReleaseSlot := run(4, old, true)
			newDone := run(5, recent, true)
			exec(`INSERT INTO layer_slots (repo, layer, run_id, taken_at) VALUES (?, ?, ?, ?)`, "acme/infra", "net", oldInLayerSlot, old.UnixMilli())
			if ok, err := st.TakeReleaseSlot(ctx, store.ReleaseKey{Cluster: "ci", Namespace: "ci", ReleaseName: "api"}, oldInReleaseSlot); err != nil || !ok {
				t.Fatalf("release slot: %v %v", ok, err)
			}

			for _, b := range []struct {
				id      string
				created time.Time
			}{{"old-batch", old}, {"new-batch", recent}} {
				if _, err := st.CreateBatch(ctx, store.PlanBatch{ID: b.id, Repo: "acme/infra", PR: 1, Total: 1}); err != nil {
					t.Fatal(err)
				}
				if _, err := st.FinishBatchItem(ctx, b.id, store.BatchItem{Layer: "net", Report: "{}"}); err != nil {
					t.Fatal(err)
				}
				exec(`UPDATE plan_batches SET created_at = ? WHERE id = ?`, b.created.UnixMilli(), b.id)
			}

			got, err := st.Prune(ctx, now.Add(-30*24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if got != (store.Pruned{Deliveries: 1, Runs: 1, Batches: 1}) {
				t.Errorf("Prune = %+v, want one of each", got)
			}
			count := func(q string, args ...any) int {
				t.Helper()
				var n int
				if err := st.DB().QueryRowContext(ctx, st.Rebind(q), args...).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			if n := count(`SELECT count(*) FROM deliveries WHERE id = ?`, "new-delivery"); n != 1 {
				t.Error("a recent delivery was pruned")
			}
			if n := count(`SELECT count(*) FROM deliveries`); n != 1 {
				t.Errorf("%d deliveries left, want 1", n)
			}
			if _, err := st.Run(ctx, oldDone); err != store.ErrNotFound {
				t.Errorf("old finished run: %v, want it pruned", err)
			}
			if n := count(`SELECT count(*) FROM run_log_chunks WHERE run_id = ?`, oldDone); n != 0 {
				t.Errorf("the old finished run's log left %d chunks", n)
			}
			for name, id := range map[string]int64{"running": oldRunning, "in a layer slot": oldInLayerSlot,
				"in a release slot": oldInReleaseSlot, "recent": newDone} {
				if r, err := st.Run(ctx, id); err != nil || r.Log == "" {
					t.Errorf("%s run: %+v, %v; want it kept with its log", name, r, err)
				}
			}
			if n := count(`SELECT count(*) FROM plan_batch_items WHERE batch_id = ?`, "old-batch"); n != 0 {
				t.Errorf("old batch's reports left: %d", n)
			}
			if n := count(`SELECT count(*) FROM plan_batch_items WHERE batch_id = ?`, "new-batch"); n != 1 {
				t.Errorf("recent batch's reports: %d, want 1", n)
			}

			// Pruning again finds nothing more.
			if again, err := st.Prune(ctx, now.Add(-30*24*time.Hour)); err != nil || again != (store.Pruned{}) {
				t.Errorf("second Prune = %+v, %v", again, err)
			}
		})
	}
}
