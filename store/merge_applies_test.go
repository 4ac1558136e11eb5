package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// A reviewed plan's changes are kept sealed, bound to their row, and
// outlive the PR's plans; the post-merge applies of a layer not ended are listed, a
// redelivered close adds none.
func TestMergeApplies(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			if err := st.SavePlanChanges(ctx, "acme/infra", 1, "net", "h1", []byte(`[{"address":"a"}]`)); err != nil {
				t.Fatal(err)
			}
			if err := st.DeletePlansOfPR(ctx, "acme/infra", 1); err != nil {
				t.Fatal(err)
			}
			got, err := st.PlanChanges(ctx, "acme/infra", 1, "net", "h1")
			if err != nil || string(got) != `[{"address":"a"}]` {
				t.Fatalf("PlanChanges = %q, %v", got, err)
			}
			if _, err := st.PlanChanges(ctx, "acme/infra", 1, "net", "h2"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("changes at another head: %v", err)
			}
			var raw []byte
			if err := st.DB().QueryRowContext(ctx, `SELECT changes FROM plan_changes`).Scan(&raw); err != nil {
				t.Fatal(err)
			}
			if string(raw) == `[{"address":"a"}]` {
				t.Fatal("changes stored in clear")
			}
			if err := st.DeletePlanChanges(ctx, "acme/infra", 1); err != nil {
				t.Fatal(err)
			}
			if _, err := st.PlanChanges(ctx, "acme/infra", 1, "net", "h1"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("changes after DeletePlanChanges: %v", err)
			}

			t0 := time.UnixMilli(1_700_000_000_000)
			add := func(pr int, at time.Time) *store.MergeApply {
				t.Helper()
				m, err := st.AddMergeApply(ctx, store.MergeApply{Repo: "acme/infra", PR: pr, Layer: "net", HeadSHA: "h", MergeSHA: "m",
					MergedAt: at, State: "queued"})
				if err != nil {
					t.Fatal(err)
				}
				return m
			}
			second := add(2, t0.Add(time.Second))
			first := add(1, t0)
			third := add(3, t0.Add(time.Second))
			if again := add(2, t0.Add(time.Hour)); again.ID != second.ID || !again.MergedAt.Equal(t0.Add(time.Second)) {
				t.Fatalf("a redelivered close added %+v", again)
			}
			unended, err := st.MergeAppliesIn(ctx, "acme/infra", "net", "queued", "running")
			if err != nil || len(unended) != 3 || unended[0].PR != 2 || unended[1].PR != 1 || unended[2].PR != 3 {
				t.Fatalf("not ended = %+v, %v", unended, err)
			}
			if err := st.SetMergeApply(ctx, first.ID, "applied", "", 7); err != nil {
				t.Fatal(err)
			}
			if err := st.SetMergeApply(ctx, third.ID, "running", "", 8); err != nil {
				t.Fatal(err)
			}
			if unended, _ := st.MergeAppliesIn(ctx, "acme/infra", "net", "queued", "running"); len(unended) != 2 || unended[0].PR != 2 || unended[1].PR != 3 {
				t.Fatalf("not ended once #1 applied = %+v", unended)
			}
			if other, _ := st.MergeAppliesIn(ctx, "acme/infra", "dns", "queued", "running"); len(other) != 0 {
				t.Fatalf("another layer's = %+v", other)
			}
			last, err := st.LastMergeApplyOf(ctx, "acme/infra", "net")
			if err != nil || last.PR != 3 {
				t.Fatalf("last = %+v, %v", last, err)
			}
			latest, err := st.MergeAppliesOfLayer(ctx, "acme/infra", "net", 2)
			if err != nil || len(latest) != 2 || latest[0].PR != 3 || latest[1].PR != 2 {
				t.Fatalf("the layer's latest two = %+v, %v", latest, err)
			}
			mine, err := st.MergeAppliesOfPR(ctx, "acme/infra", 1)
			if err != nil || len(mine) != 1 || mine[0].State != "applied" || mine[0].CheckRunID != 7 {
				t.Fatalf("of #1 = %+v, %v", mine, err)
			}
		})
	}
}
