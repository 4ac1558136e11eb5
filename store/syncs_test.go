package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

func TestTakeovers(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			until := time.Now().Add(time.Hour).Truncate(time.Millisecond)
			tk := store.Takeover{Repo: "acme/infra", Sync: "dev", PR: 1, Holder: "alice", HeadSHA: "a1", ExpiresAt: until, InstallationID: 7}
			held, ok, err := st.TryTakeover(ctx, tk)
			if err != nil || !ok || held.PR != 1 || !held.ExpiresAt.Equal(until) || held.InstallationID != 7 {
				t.Fatalf("first takeover: %+v %v %v", held, ok, err)
			}
			// PR #2 is refused and told who holds it.
			held, ok, err = st.TryTakeover(ctx, store.Takeover{Repo: "acme/infra", Sync: "dev", PR: 2, Holder: "bob", HeadSHA: "b1", ExpiresAt: until})
			if err != nil || ok || held.PR != 1 || held.Holder != "alice" {
				t.Fatalf("second PR: %+v %v %v", held, ok, err)
			}
			// The holder extends it; an expiry scheduled for the old time leaves it.
			later := until.Add(time.Hour)
			tk.ExpiresAt, tk.HeadSHA = later, "a2"
			if held, ok, _ := st.TryTakeover(ctx, tk); !ok || !held.ExpiresAt.Equal(later) || held.HeadSHA != "a2" {
				t.Fatalf("extended: %+v", held)
			}
			if gone, err := st.ExpireTakeover(ctx, "acme/infra", "dev", 1, until, expired); err != nil || gone != nil {
				t.Fatalf("expired an extended takeover: %+v %v", gone, err)
			}
			if err := st.SetTakeoverCheck(ctx, "acme/infra", "dev", 1, "a3", 99); err != nil {
				t.Fatal(err)
			}
			if held, _ := st.TakeoversOfPR(ctx, "acme/infra", 1); len(held) != 1 || held[0].CheckRunID != 99 || held[0].HeadSHA != "a3" {
				t.Fatalf("takeovers of #1 = %+v", held)
			}
			if gone, _ := st.EndTakeover(ctx, "acme/infra", "dev", 2, "released"); gone != nil {
				t.Fatal("#2 ended #1's takeover")
			}
			if gone, err := st.ExpireTakeover(ctx, "acme/infra", "dev", 1, later, expired); err != nil || gone == nil || gone.PR != 1 {
				t.Fatalf("expiry: %+v %v", gone, err)
			}
			if _, err := st.Takeover(ctx, "acme/infra", "dev"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("takeover after expiry: %v", err)
			}
			if _, ok, _ := st.TryTakeover(ctx, store.Takeover{Repo: "acme/infra", Sync: "dev", PR: 2, Holder: "bob", HeadSHA: "b1", ExpiresAt: until}); !ok {
				t.Fatal("#2 could not take the released sync")
			}
		})
	}
}

func TestSyncHydrations(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			if _, err := st.SyncHydration(ctx, "acme/infra", "dev"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("before any hydration: %v", err)
			}
			h := store.SyncHydration{Repo: "acme/infra", Sync: "dev", InstallationID: 7, Spec: `{"name":"dev"}`,
				Inputs: []string{"deploy/base/", "deploy/base/kustomization.yaml"}, SourceCommit: "c1"}
			if err := st.RecordHydration(ctx, h); err != nil {
				t.Fatal(err)
			}
			if pinned, _ := st.PinnedSyncs(ctx); len(pinned) != 0 {
				t.Fatalf("a sync without pinned images is listed: %+v", pinned)
			}
			h.SourceCommit, h.Pinned = "c2", []store.PinnedImage{{Name: "ghcr.io/acme/api", Tag: "stable", Digest: "sha256:1"}}
			if err := st.RecordHydration(ctx, h); err != nil {
				t.Fatal(err)
			}
			got, err := st.SyncHydration(ctx, "acme/infra", "dev")
			if err != nil || got.SourceCommit != "c2" || len(got.Inputs) != 2 || got.Spec != h.Spec || got.InstallationID != 7 {
				t.Fatalf("hydration = %+v %v", got, err)
			}
			pinned, err := st.PinnedSyncs(ctx)
			if err != nil || len(pinned) != 1 || pinned[0].Pinned[0].Digest != "sha256:1" {
				t.Fatalf("pinned syncs = %+v %v", pinned, err)
			}
		})
	}
}
