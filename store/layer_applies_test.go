package store_test

import (
	"context"
	"errors"
	"testing"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// Each apply moves the layer's generation on, once per plan applied; a plan
// keeps the generation it was made at.
func TestLayerGenerations(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			if a, err := st.LastApply(ctx, "acme/infra", "net"); err != nil || a.Generation != 0 {
				t.Fatalf("LastApply of a layer never applied = %+v, %v", a, err)
			}
			for _, p := range []store.Plan{
				{Repo: "acme/infra", PR: 1, Layer: "net", HeadSHA: "h1", PlanFile: []byte("one"), HasChanges: true},
				{Repo: "acme/infra", PR: 2, Layer: "net", HeadSHA: "h2", PlanFile: []byte("two"), HasChanges: true},
				{Repo: "acme/infra", PR: 2, Layer: "app", HeadSHA: "h2", PlanFile: []byte("app")},
			} {
				if err := st.SavePlan(ctx, p); err != nil {
					t.Fatal(err)
				}
			}
			if ok, err := st.MarkApplied(ctx, "acme/infra", 1, "net", "h1"); !ok || err != nil {
				t.Fatalf("MarkApplied = %v, %v", ok, err)
			}
			if ok, _ := st.MarkApplied(ctx, "acme/infra", 1, "net", "h1"); ok {
				t.Fatal("applied twice")
			}
			a, err := st.LastApply(ctx, "acme/infra", "net")
			if err != nil || a.Generation != 1 || a.PR != 1 || a.HeadSHA != "h1" || a.AppliedAt.IsZero() {
				t.Fatalf("LastApply = %+v, %v", a, err)
			}
			if other, _ := st.LastApply(ctx, "acme/infra", "app"); other.Generation != 0 {
				t.Errorf("another layer moved: %+v", other)
			}
			open, err := st.UnappliedPlansOf(ctx, "acme/infra", "net")
			if err != nil || len(open) != 1 || open[0].PR != 2 || open[0].BaseGeneration != 0 {
				t.Fatalf("UnappliedPlansOf = %+v, %v", open, err)
			}
			// #2 plans again after the apply: its plan is of generation 1.
			if err := st.SavePlan(ctx, store.Plan{Repo: "acme/infra", PR: 2, Layer: "net", HeadSHA: "h2", PlanFile: []byte("two"), BaseGeneration: a.Generation}); err != nil {
				t.Fatal(err)
			}
			if p, err := st.PlanAt(ctx, "acme/infra", 2, "net", "h2"); err != nil || p.BaseGeneration != 1 {
				t.Fatalf("PlanAt = %+v, %v", p, err)
			}
			if ok, _ := st.MarkApplied(ctx, "acme/infra", 2, "net", "h2"); !ok {
				t.Fatal("#2's apply refused")
			}
			if a, _ := st.LastApply(ctx, "acme/infra", "net"); a.Generation != 2 || a.PR != 2 {
				t.Errorf("LastApply after #2 = %+v", a)
			}
		})
	}
}

// DropLock releases a lock an /apply took and did not use; unlike Unlock,
// the PR's plans stay.
func TestDropLockKeepsPlans(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, store.SQLite)
	if err := st.SavePlan(ctx, store.Plan{Repo: "acme/infra", PR: 2, Layer: "net", HeadSHA: "h2", PlanFile: []byte("p")}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := st.TryLock(ctx, store.Lock{Repo: "acme/infra", Layer: "net", PR: 2, HeadSHA: "h2", Holder: "bob"}); !ok || err != nil {
		t.Fatalf("TryLock = %v, %v", ok, err)
	}
	if err := st.DropLock(ctx, "acme/infra", "net", 3); err != nil {
		t.Fatal(err)
	}
	if l, err := st.Lock(ctx, "acme/infra", "net"); err != nil || l.PR != 2 {
		t.Fatalf("another PR's DropLock released #2's lock: %+v, %v", l, err)
	}
	if err := st.DropLock(ctx, "acme/infra", "net", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Lock(ctx, "acme/infra", "net"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("lock after DropLock: %v", err)
	}
	if plans, _ := st.PlansOfPR(ctx, "acme/infra", 2); len(plans) != 1 {
		t.Fatalf("plans after DropLock: %d, want 1", len(plans))
	}
}
