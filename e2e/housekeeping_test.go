package e2e

import (
	"context"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// A database with deliveries and a run log older than the retention -> the
// server's housekeeping job (at start, then hourly) deletes them and keeps
// the recent ones.
func TestOldDeliveriesAndRunLogsArePruned(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			url := storetest.URL(t, d)
			st, err := store.Open(ctx, url, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			old := time.Now().Add(-11 * 24 * time.Hour).UnixMilli()
			exec := func(q string, args ...any) {
				t.Helper()
				if _, err := st.DB().ExecContext(ctx, st.Rebind(q), args...); err != nil {
					t.Fatal(err)
				}
			}
			record := store.RecordDeliveries([]store.Delivery{
				{ID: "old", Event: "push", ReceivedAt: old},
				{ID: "recent", Event: "push", ReceivedAt: time.Now().UnixMilli()},
			})
			exec(record.SQL, record.Args...)
			run, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra"})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.AppendLog(ctx, run.ID, "an old log\n"); err != nil {
				t.Fatal(err)
			}
			if err := st.FinishRun(ctx, run.ID, store.RunSucceeded, "success", ""); err != nil {
				t.Fatal(err)
			}
			exec(`UPDATE runs SET started_at = ? WHERE id = ?`, old, run.ID)

			e := apptest.Start(t, apptest.Options{DatabaseURL: url, Configure: func(c *config.Server) { c.Retention = 10 * 24 * time.Hour }})
			count := func(q string, args ...any) int {
				var n int
				if err := st.DB().QueryRowContext(ctx, st.Rebind(q), args...).Scan(&n); err != nil {
					t.Fatal(err)
				}
				return n
			}
			e.WaitFor(30*time.Second, func() bool {
				return count(`SELECT count(*) FROM deliveries WHERE id = ?`, "old") == 0 &&
					count(`SELECT count(*) FROM runs WHERE id = ?`, run.ID) == 0
			})
			if count(`SELECT count(*) FROM deliveries WHERE id = ?`, "recent") != 1 {
				t.Error("a recent delivery was pruned")
			}
		})
	}
}
