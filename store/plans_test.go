package store_test

import (
	"bytes"
	"context"
	"testing"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

func TestPlans(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			p := store.Plan{Repo: "acme/infra", PR: 3, Layer: "net", HeadSHA: "h1", PlanFile: []byte{0, 1, 2, 255}, Summary: "1 to add", HasChanges: true}
			if err := st.SavePlan(ctx, p); err != nil {
				t.Fatal(err)
			}
			got, err := st.PlanAt(ctx, "acme/infra", 3, "net", "h1")
			if err != nil || !bytes.Equal(got.PlanFile, p.PlanFile) || !got.HasChanges || !got.AppliedAt.IsZero() {
				t.Fatalf("PlanAt = %+v, %v", got, err)
			}
			if ok, _ := st.MarkApplied(ctx, "acme/infra", 3, "net", "h1"); !ok {
				t.Fatal("first MarkApplied refused")
			}
			if ok, _ := st.MarkApplied(ctx, "acme/infra", 3, "net", "h1"); ok {
				t.Fatal("a plan was applied twice")
			}
			if err := st.DeletePlansOfPR(ctx, "acme/infra", 3); err != nil {
				t.Fatal(err)
			}
			if plans, _ := st.PlansOfPR(ctx, "acme/infra", 3); len(plans) != 0 {
				t.Fatalf("plans left: %d", len(plans))
			}
		})
	}
}

func TestPlanBatch(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			b := store.PlanBatch{ID: "job-1", Repo: "r", PR: 1, Total: 2}
			if ok, _ := st.CreateBatch(ctx, b); !ok {
				t.Fatal("batch not created")
			}
			if ok, _ := st.CreateBatch(ctx, b); ok {
				t.Fatal("batch created twice")
			}
			if items, _ := st.FinishBatchItem(ctx, "job-1", store.BatchItem{Layer: "b", Position: 1, Report: "B"}); items != nil {
				t.Fatal("batch complete after one of two")
			}
			items, err := st.FinishBatchItem(ctx, "job-1", store.BatchItem{Layer: "a", Position: 0, Report: "A"})
			if err != nil || len(items) != 2 || items[0].Report != "A" {
				t.Fatalf("items = %+v, %v", items, err)
			}
			if again, _ := st.FinishBatchItem(ctx, "job-1", store.BatchItem{Layer: "a", Position: 0, Report: "A"}); again != nil {
				t.Fatal("the comment was claimed twice")
			}
		})
	}
}
