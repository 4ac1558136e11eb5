package store_test

import (
	"context"
	"errors"
	"testing"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// A repository's recorded discovery is replaced by the next push's.
func TestSyncDiscovery(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			if _, err := st.SyncDiscoveryOf(ctx, "acme/infra"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("before any push: %v", err)
			}
			first := store.SyncDiscovery{Repo: "acme/infra", Commit: "a1",
				Syncs:    []store.DefinedSync{{Name: "dev"}, {Name: "web", File: "apps/web/strata-sync.yaml"}},
				Skipped:  []string{"prod (envs/prod/strata-sync.yaml)"},
				Problems: []store.SyncFileProblem{{Sync: "api", File: "apps/api/strata-sync.yaml", Line: 9, Message: `unknown key "imagez"`}}}
			if err := st.RecordSyncDiscovery(ctx, first); err != nil {
				t.Fatal(err)
			}
			got, err := st.SyncDiscoveryOf(ctx, "acme/infra")
			if err != nil || got.Commit != "a1" || len(got.Syncs) != 2 || got.Syncs[1].File != "apps/web/strata-sync.yaml" ||
				len(got.Skipped) != 1 || len(got.Problems) != 1 || got.Problems[0].Line != 9 || got.At.IsZero() {
				t.Fatalf("first: %+v %v", got, err)
			}
			if err := st.RecordSyncDiscovery(ctx, store.SyncDiscovery{Repo: "acme/infra", Commit: "b2", Syncs: []store.DefinedSync{{Name: "dev"}}}); err != nil {
				t.Fatal(err)
			}
			got, err = st.SyncDiscoveryOf(ctx, "acme/infra")
			if err != nil || got.Commit != "b2" || len(got.Syncs) != 1 || len(got.Skipped) != 0 || len(got.Problems) != 0 {
				t.Fatalf("second: %+v %v", got, err)
			}
		})
	}
}
