package store_test

import (
	"context"
	"testing"
	"time"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

func TestStoreOnBothBackends(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			st := storetest.Open(t, d)
			ctx := context.Background()
			if err := st.Migrate(ctx); err != nil {
				t.Fatalf("second migration: %v", err)
			}
			run, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "plan", Repo: "acme/infra", PR: 4, Target: "network"})
			if err != nil {
				t.Fatal(err)
			}
			if again, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "plan"}); err != nil || again.ID != run.ID {
				t.Fatalf("starting the same attempt twice gave run %v, %v; want %d", again, err, run.ID)
			}
			if err := st.AppendLog(ctx, run.ID, "init\n"); err != nil {
				t.Fatal(err)
			}
			if err := st.AppendLog(ctx, run.ID, "plan ✓\n"); err != nil {
				t.Fatal(err)
			}
			// Nobody heard from it for a minute: its process died.
			if _, err := st.DB().ExecContext(ctx, st.Rebind(`UPDATE runs SET heartbeat_at = ? WHERE id = ?`),
				time.Now().Add(-time.Minute).UnixMilli(), run.ID); err != nil {
				t.Fatal(err)
			}
			lost := storetest.DeclareLost(t, st, 10*time.Second)
			if len(lost) != 1 || lost[0].ID != run.ID {
				t.Fatalf("claimed %v; want run %d", lost, run.ID)
			}
			if again := storetest.DeclareLost(t, st, 10*time.Second); len(again) != 0 {
				t.Fatal("a lost run was claimed twice")
			}
			got, err := st.Run(ctx, run.ID)
			if err != nil || got.Status != store.RunLost || got.Log != "init\nplan ✓\n" {
				t.Fatalf("run = %+v, %v", got, err)
			}
			if abandoned, _ := st.JobAbandoned(ctx, 1); !abandoned {
				t.Fatal("the job of a lost run is not abandoned")
			}
			// Finishing late does not resurrect it.
			st.FinishRun(ctx, run.ID, store.RunSucceeded, "success", "")
			if got, _ := st.Run(ctx, run.ID); got.Status != store.RunLost {
				t.Fatalf("status %q after a late finish, want lost", got.Status)
			}
		})
	}
}
