package store_test

import (
	"context"
	"testing"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// Two runs of one release: the second waits for the first, takes over a slot
// whose run is no longer running, and another release is independent.
func TestReleaseSlot(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			start := func(job int64) int64 {
				r, err := st.StartRun(ctx, store.Run{JobID: job, Attempt: 1, Kind: "release_test", Repo: "acme/infra"})
				if err != nil {
					t.Fatal(err)
				}
				return r.ID
			}
			one, two, three := start(1), start(2), start(3)
			api := store.ReleaseKey{Cluster: "ci", Namespace: "ci", ReleaseName: "api-pr-1"}
			if ok, err := st.TakeReleaseSlot(ctx, api, one); err != nil || !ok {
				t.Fatalf("first run: %v %v", ok, err)
			}
			if ok, _ := st.TakeReleaseSlot(ctx, api, two); ok {
				t.Fatal("second run took a held slot")
			}
			if holder, _ := st.ReleaseSlotHolder(ctx, api); holder != one {
				t.Fatalf("holder = %d, want %d", holder, one)
			}
			other := store.ReleaseKey{Cluster: "ci", Namespace: "ci", ReleaseName: "api-pr-2"}
			if ok, _ := st.TakeReleaseSlot(ctx, other, three); !ok {
				t.Fatal("another release's slot was not free")
			}
			// The holder's process died: its run is no longer running.
			if err := st.FinishRun(ctx, one, store.RunLost, "", ""); err != nil {
				t.Fatal(err)
			}
			if ok, err := st.TakeReleaseSlot(ctx, api, two); err != nil || !ok {
				t.Fatalf("slot of a lost run not taken over: %v %v", ok, err)
			}
			if err := st.FreeReleaseSlot(ctx, api, two); err != nil {
				t.Fatal(err)
			}
			if holder, _ := st.ReleaseSlotHolder(ctx, api); holder != 0 {
				t.Fatalf("slot still held by %d", holder)
			}
		})
	}
}
