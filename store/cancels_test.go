package store_test

import (
	"context"
	"testing"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// /cancel on PR #1 with three plans: one queued, one reported already, one
// blocked (no check of its own); and a plan of PR #2.
func TestCancelPlans(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			for _, b := range []store.PlanBatch{{ID: "b1", Repo: "acme/infra", PR: 1, Total: 3}, {ID: "b2", Repo: "acme/infra", PR: 2, Total: 1}} {
				if _, err := st.CreateBatch(ctx, b); err != nil {
					t.Fatal(err)
				}
			}
			must(st.SetBatchLayer(ctx, "b1", "net", store.BatchLayer{CheckRunID: 10, Started: true}))
			must(st.SetBatchLayer(ctx, "b1", "dns", store.BatchLayer{CheckRunID: 11, Started: true}))
			must(st.SetBatchLayer(ctx, "b1", "app", store.BatchLayer{Started: true}))
			must(st.SetBatchLayer(ctx, "b2", "net", store.BatchLayer{CheckRunID: 20, Started: true}))
			if _, err := st.FinishBatchItem(ctx, "b1", store.BatchItem{Layer: "dns", Report: "{}"}); err != nil {
				t.Fatal(err)
			}

			got, err := st.CancelPlans(ctx, "acme/infra", 1, "alice")
			if err != nil || len(got) != 1 || got[0] != (store.PlanInFlight{Batch: "b1", Layer: "net", CheckRunID: 10}) {
				t.Fatalf("CancelPlans = %+v, %v; want net of b1 only", got, err)
			}
			if by, err := st.PlanCancelledBy(ctx, "b1", "net"); by != "alice" || err != nil {
				t.Fatalf("PlanCancelledBy(net) = %q, %v", by, err)
			}
			for _, k := range [][2]string{{"b1", "dns"}, {"b2", "net"}, {"b9", "net"}} {
				if by, err := st.PlanCancelledBy(ctx, k[0], k[1]); by != "" || err != nil {
					t.Errorf("PlanCancelledBy(%v) = %q, %v; want nobody", k, by, err)
				}
			}
			if again, err := st.CancelPlans(ctx, "acme/infra", 1, "bob"); len(again) != 0 || err != nil {
				t.Errorf("a second /cancel = %+v, %v; want nothing", again, err)
			}

			// A plan that has its outcome is no longer cancelled; one
			// cancelled first stays cancelled.
			must(st.SetBatchLayer(ctx, "b2", "dns", store.BatchLayer{CheckRunID: 21, Started: true}))
			if by, err := st.SettlePlan(ctx, "b2", "dns"); by != "" || err != nil {
				t.Fatalf("SettlePlan(b2 dns) = %q, %v", by, err)
			}
			if got, _ := st.CancelPlans(ctx, "acme/infra", 2, "bob"); len(got) != 1 || got[0].Layer != "net" {
				t.Fatalf("CancelPlans(#2) = %+v, want net only (dns is settled)", got)
			}
			if by, err := st.SettlePlan(ctx, "b2", "net"); by != "bob" || err != nil {
				t.Fatalf("SettlePlan of a cancelled plan = %q, %v; want bob", by, err)
			}

			r, err := st.StartRun(ctx, store.Run{JobID: 5, Attempt: 1, Kind: "layer_apply", Repo: "acme/infra", PR: 1, Target: "net"})
			if err != nil {
				t.Fatal(err)
			}
			if runs, err := st.RunningRuns(ctx, "acme/infra", 1, "layer_apply"); err != nil || len(runs) != 1 || runs[0].ID != r.ID {
				t.Fatalf("RunningRuns = %v, %v", runs, err)
			}
			must(st.FinishRun(ctx, r.ID, store.RunSucceeded, "success", ""))
			if runs, _ := st.RunningRuns(ctx, "acme/infra", 1, "layer_apply"); len(runs) != 0 {
				t.Errorf("a finished apply is running: %v", runs)
			}
		})
	}
}
