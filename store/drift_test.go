package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// A repo's drift layers follow its config: new ones are due at once, a
// known one keeps when it is due and what it found, a changed schedule is
// due again, a layer that stops asking is forgotten.
func TestDriftLayers(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			want := []store.DriftWanted{{Layer: "net", Schedule: "every 6h"}, {Layer: "app", Schedule: "@daily"}}
			if err := st.SetDriftLayers(ctx, "acme/infra", 7, want, t0); err != nil {
				t.Fatal(err)
			}
			due, err := st.DueDriftLayers(ctx, t0)
			if err != nil || len(due) != 2 {
				t.Fatalf("due at t0 = %v, %v; want both layers", due, err)
			}
			if err := st.RecordDrift(ctx, "acme/infra", "net", store.DriftDrifted, "abc", 12, t0); err != nil {
				t.Fatal(err)
			}
			if err := st.SetDriftDue(ctx, "acme/infra", "net", t0.Add(6*time.Hour)); err != nil {
				t.Fatal(err)
			}
			if err := st.SetDriftDue(ctx, "acme/infra", "app", t0.Add(24*time.Hour)); err != nil {
				t.Fatal(err)
			}
			if due, _ := st.DueDriftLayers(ctx, t0.Add(time.Hour)); len(due) != 0 {
				t.Fatalf("due an hour later = %+v, want none", due)
			}

			// The same config again (a push that changed something else):
			// nothing moves. app's schedule changes: due at once.
			want[1].Schedule = "every 12h"
			if err := st.SetDriftLayers(ctx, "acme/infra", 7, want, t0.Add(2*time.Hour)); err != nil {
				t.Fatal(err)
			}
			net, err := st.DriftLayer(ctx, "acme/infra", "net")
			if err != nil || net.State != store.DriftDrifted || net.Issue != 12 || net.LastSHA != "abc" || !net.NextDue.Equal(t0.Add(6*time.Hour)) {
				t.Fatalf("net after the same config = %+v, %v", net, err)
			}
			due, _ = st.DueDriftLayers(ctx, t0.Add(2*time.Hour))
			if len(due) != 1 || due[0].Layer != "app" || due[0].Schedule != "every 12h" {
				t.Fatalf("due after app's new schedule = %+v", due)
			}
			counts, err := st.DriftCounts(ctx)
			if err != nil || counts[store.DriftDrifted] != 1 || counts[store.DriftUnknown] != 1 {
				t.Fatalf("counts = %v, %v", counts, err)
			}

			// net stops asking; then the file asks for nothing.
			if err := st.SetDriftLayers(ctx, "acme/infra", 7, want[1:], t0); err != nil {
				t.Fatal(err)
			}
			if _, err := st.DriftLayer(ctx, "acme/infra", "net"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("net after it stopped asking: %v", err)
			}
			if err := st.SetDriftLayers(ctx, "acme/infra", 7, nil, t0); err != nil {
				t.Fatal(err)
			}
			if all, _ := st.DriftLayersOf(ctx, "acme/infra"); len(all) != 0 {
				t.Fatalf("layers after the config dropped drift = %+v", all)
			}
		})
	}
}
