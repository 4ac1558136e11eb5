package store_test

import (
	"context"
	"strings"
	"testing"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// The layer page's reads: the workspaces of a layer with versions or a
// lock (not another layer's, not another repository's), and its locks.
func TestStateWorkspacesAndLocksOfLayer(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			put := func(k store.StateKey) {
				t.Helper()
				if _, err := st.PutState(ctx, k, tfState(1, "L", "a"), store.StateVersion{RunID: 1}, false, 0); err != nil {
					t.Fatal(err)
				}
			}
			put(store.StateKey{Repo: "acme/infra", Layer: "net"})
			put(store.StateKey{Repo: "acme/infra", Layer: "net", Workspace: "prod"})
			put(store.StateKey{Repo: "acme/infra", Layer: "dns", Workspace: "other-layer"})
			put(store.StateKey{Repo: "acme/other", Layer: "net", Workspace: "other-repo"})
			if _, ok, err := st.LockState(ctx, store.StateKey{Repo: "acme/infra", Layer: "net", Workspace: "staging"},
				store.StateLock{ID: "lock-1", Info: []byte(`{"ID":"lock-1","Operation":"OperationTypeApply"}`), RunID: 9}); err != nil || !ok {
				t.Fatalf("LockState = %v, %v", ok, err)
			}
			ws, err := st.StateWorkspaces(ctx, "acme/infra", "net")
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(ws, " "); got != "default prod staging" {
				t.Errorf("workspaces = %q, want %q", got, "default prod staging")
			}
			locks, err := st.StateLocksOfLayer(ctx, "acme/infra", "net")
			if err != nil {
				t.Fatal(err)
			}
			if len(locks) != 1 || locks[0].ID != "lock-1" || locks[0].RunID != 9 || locks[0].Key.Workspace != "staging" {
				t.Fatalf("locks = %+v, want lock-1 of run 9 on staging", locks)
			}
			if none, err := st.StateLocksOfLayer(ctx, "acme/infra", "dns"); err != nil || len(none) != 0 {
				t.Errorf("locks of dns = %+v, %v; want none", none, err)
			}
		})
	}
}
