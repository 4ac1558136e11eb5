package store_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// tfState is a Terraform state file with this serial, lineage and a marker
// that makes contents differ.
func tfState(serial int, lineage, marker string) []byte {
	return []byte(fmt.Sprintf(`{"version":4,"terraform_version":"1.5.7","serial":%d,"lineage":%q,"outputs":{"m":{"value":%q,"type":"string"}},"resources":[],"check_results":null}`,
		serial, lineage, marker))
}

func TestStateVersionsKeepTerraformsRules(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			key := store.StateKey{Repo: "acme/infra", Layer: "net"}
			if c, v, err := st.CurrentState(ctx, key); c != nil || v != nil || err != nil {
				t.Fatalf("CurrentState of a new layer = %q, %+v, %v; want nothing", c, v, err)
			}
			v1, err := st.PutState(ctx, key, tfState(1, "L", "a"), store.StateVersion{RunID: 7, PR: 1, Commit: "c1"}, false, 0)
			if err != nil {
				t.Fatal(err)
			}
			if v1.Serial != 1 || v1.Lineage != "L" || v1.Kind != store.StateByRun || v1.RunID != 7 || v1.PR != 1 || v1.Commit != "c1" ||
				v1.Key.Workspace != "default" || v1.Size != len(tfState(1, "L", "a")) {
				t.Fatalf("first version = %+v", v1)
			}
			// Terraform writes the same state again: nothing new.
			same, err := st.PutState(ctx, key, tfState(1, "L", "a"), store.StateVersion{RunID: 8}, false, 0)
			if err != nil || same.ID != v1.ID {
				t.Fatalf("same serial, same content = %+v, %v; want version %d", same, err, v1.ID)
			}
			refused := []struct {
				name    string
				content []byte
				want    string
			}{
				{"same serial, other content", tfState(1, "L", "b"), "already has serial 1"},
				{"older serial", tfState(0, "L", "b"), "older (0)"},
				{"another lineage", tfState(5, "M", "b"), "lineage L, this one M"},
			}
			for _, r := range refused {
				_, err := st.PutState(ctx, key, r.content, store.StateVersion{}, false, 0)
				if !errors.Is(err, store.ErrStateConflict) || !strings.Contains(err.Error(), r.want) {
					t.Errorf("%s: err = %v, want a conflict saying %q", r.name, err, r.want)
				}
			}
			if _, err := st.PutState(ctx, key, []byte("not json"), store.StateVersion{}, false, 0); !errors.Is(err, store.ErrNotState) {
				t.Errorf("garbage: err = %v, want ErrNotState", err)
			}
			v2, err := st.PutState(ctx, key, tfState(2, "L", "b"), store.StateVersion{RunID: 9, PR: 2, Commit: "c2"}, false, 0)
			if err != nil {
				t.Fatal(err)
			}
			// A push with force replaces even another lineage.
			v3, err := st.PutState(ctx, key, tfState(1, "M", "c"), store.StateVersion{By: "alice", Kind: store.StateByPush}, true, 0)
			if err != nil {
				t.Fatal(err)
			}
			content, cur, err := st.CurrentState(ctx, key)
			if err != nil || cur.ID != v3.ID || !bytes.Equal(content, tfState(1, "M", "c")) || cur.By != "alice" || cur.Kind != store.StateByPush {
				t.Fatalf("current = %s, %+v, %v", content, cur, err)
			}
			list, err := st.StateVersions(ctx, key, 0)
			if err != nil || len(list) != 3 || list[0].ID != v3.ID || list[1].ID != v2.ID || list[2].ID != v1.ID {
				t.Fatalf("versions = %+v, %v; want v3, v2, v1", list, err)
			}
			if two, _ := st.StateVersions(ctx, key, 2); len(two) != 2 {
				t.Fatalf("limit 2 gave %d", len(two))
			}
			old, ov, err := st.StateVersionContent(ctx, key, v2.ID)
			if err != nil || ov.PR != 2 || !bytes.Equal(old, tfState(2, "L", "b")) {
				t.Fatalf("version 2 = %s, %+v, %v", old, ov, err)
			}
			// A version is reached only through its own key.
			other := store.StateKey{Repo: "acme/infra", Layer: "net", Workspace: "prod"}
			if _, _, err := st.StateVersionContent(ctx, other, v2.ID); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("version of net read through net@prod: %v", err)
			}

			// Rollback to v2: a new version with v2's content above the current serial.
			rb, err := st.RollbackState(ctx, key, v2.ID, "bob", 0)
			if err != nil {
				t.Fatal(err)
			}
			if rb.Kind != store.StateByRollback || rb.By != "bob" || rb.RolledBackFrom != v2.ID || rb.Serial != 2 || rb.Lineage != "L" {
				t.Fatalf("rollback = %+v", rb)
			}
			content, _, _ = st.CurrentState(ctx, key)
			if !strings.Contains(string(content), `"m"`) || !strings.Contains(string(content), `"b"`) {
				t.Fatalf("rolled back content = %s", content)
			}
			// Terraform's next write after a rollback (serial + 1, lineage L) is accepted.
			if _, err := st.PutState(ctx, key, tfState(3, "L", "d"), store.StateVersion{RunID: 10}, false, 0); err != nil {
				t.Fatalf("write after rollback: %v", err)
			}
		})
	}
}

func TestStateSealedAndBoundToItsKey(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			a := store.StateKey{Repo: "acme/infra", Layer: "net"}
			b := store.StateKey{Repo: "acme/infra", Layer: "db"}
			secret := tfState(1, "L", "hunter2-secret")
			if _, err := st.PutState(ctx, a, secret, store.StateVersion{}, false, 0); err != nil {
				t.Fatal(err)
			}
			if _, err := st.PutState(ctx, b, tfState(1, "L", "other"), store.StateVersion{}, false, 0); err != nil {
				t.Fatal(err)
			}
			var raw []byte
			if err := st.DB().QueryRow(st.Rebind(`SELECT content FROM state_versions WHERE layer = ?`), "net").Scan(&raw); err != nil {
				t.Fatal(err)
			}
			if bytes.Contains(raw, []byte("hunter2")) {
				t.Fatal("the state is stored in clear")
			}
			// Someone with the database moves net's content onto db: it does not open.
			if _, err := st.DB().Exec(st.Rebind(`UPDATE state_versions SET content = ? WHERE layer = ?`), raw, "db"); err != nil {
				t.Fatal(err)
			}
			if _, _, err := st.CurrentState(ctx, b); err == nil {
				t.Fatal("net's sealed state opened as db's")
			}
		})
	}
}

// States are compressed before they are sealed; a version written before
// that (the sealed JSON itself) still reads, and a compressed one is
// smaller in the database than its JSON.
func TestStateCompressedAndOlderVersionsStillRead(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			keys := storetest.Keys(t)
			st.UseKeys(keys)
			key := store.StateKey{Repo: "acme/infra", Layer: "net"}
			big := tfState(1, "L", strings.Repeat("a repetitive output ", 5000))
			if _, err := st.PutState(ctx, key, big, store.StateVersion{}, false, 0); err != nil {
				t.Fatal(err)
			}
			var raw []byte
			if err := st.DB().QueryRow(st.Rebind(`SELECT content FROM state_versions WHERE layer = ?`), "net").Scan(&raw); err != nil {
				t.Fatal(err)
			}
			if len(raw) > len(big)/10 {
				t.Errorf("a %d-byte state takes %d bytes in the database, want it compressed", len(big), len(raw))
			}
			if content, _, err := st.CurrentState(ctx, key); err != nil || !bytes.Equal(content, big) {
				t.Fatalf("current = %.40q, %v; want the state written", content, err)
			}
			// As PutState sealed states before they were compressed: the JSON, bound to its key, serial and lineage.
			old := tfState(2, "L", "written by an older Strata")
			sealed := keys.Seal(old, []byte("state\x00acme/infra\x00net\x00default\x002\x00L"))
			if _, err := st.DB().Exec(st.Rebind(`UPDATE state_versions SET content = ?, serial = 2, size = ? WHERE layer = ?`), sealed, len(old), "net"); err != nil {
				t.Fatal(err)
			}
			if content, _, err := st.CurrentState(ctx, key); err != nil || !bytes.Equal(content, old) {
				t.Fatalf("an uncompressed version reads %q, %v; want %q", content, err, old)
			}
		})
	}
}

func TestStateRetentionKeepsTheNewest(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			key := store.StateKey{Repo: "r", Layer: "l", Workspace: "w"}
			other := store.StateKey{Repo: "r", Layer: "l"}
			if _, err := st.PutState(ctx, other, tfState(1, "L", "x"), store.StateVersion{}, false, 3); err != nil {
				t.Fatal(err)
			}
			for i := 1; i <= 5; i++ {
				if _, err := st.PutState(ctx, key, tfState(i, "L", fmt.Sprint(i)), store.StateVersion{}, false, 3); err != nil {
					t.Fatal(err)
				}
			}
			list, _ := st.StateVersions(ctx, key, 0)
			if len(list) != 3 || list[0].Serial != 5 || list[2].Serial != 3 {
				t.Fatalf("kept %d versions: %+v; want serials 5, 4, 3", len(list), list)
			}
			if o, _ := st.StateVersions(ctx, other, 0); len(o) != 1 {
				t.Fatalf("another workspace's versions were pruned: %d left", len(o))
			}
		})
	}
}

func TestStateLock(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			key := store.StateKey{Repo: "r", Layer: "l"}
			if l, err := st.StateLockOf(ctx, key); l != nil || err != nil {
				t.Fatalf("free state has lock %+v, %v", l, err)
			}
			a := store.StateLock{ID: "a", Info: []byte(`{"ID":"a"}`), RunID: 1}
			held, ok, err := st.LockState(ctx, key, a)
			if err != nil || !ok || held.ID != "a" || held.RunID != 1 || string(held.Info) != `{"ID":"a"}` {
				t.Fatalf("first lock = %+v, %v, %v", held, ok, err)
			}
			if _, ok, _ := st.LockState(ctx, key, a); !ok {
				t.Fatal("the same lock taken again was refused")
			}
			held, ok, err = st.LockState(ctx, key, store.StateLock{ID: "b", RunID: 2})
			if err != nil || ok || held.ID != "a" {
				t.Fatalf("second lock = %+v, %v, %v; want a held", held, ok, err)
			}
			if err := st.UnlockState(ctx, key, "b"); !errors.Is(err, store.ErrStateLockMismatch) {
				t.Fatalf("unlock with another id: %v", err)
			}
			if err := st.UnlockState(ctx, key, "a"); err != nil {
				t.Fatal(err)
			}
			if err := st.UnlockState(ctx, key, "a"); err != nil {
				t.Fatalf("unlock of a free state: %v", err)
			}
			// Force unlock, as an admin.
			st.LockState(ctx, key, store.StateLock{ID: "c", RunID: 3})
			if err := st.UnlockState(ctx, key, ""); err != nil {
				t.Fatal(err)
			}
			if l, _ := st.StateLockOf(ctx, key); l != nil {
				t.Fatalf("force unlock left %+v", l)
			}
		})
	}
}

func TestStateLocksOfALostRunAreReleased(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			k1 := store.StateKey{Repo: "r", Layer: "a"}
			k2 := store.StateKey{Repo: "r", Layer: "b"}
			st.LockState(ctx, k1, store.StateLock{ID: "x", RunID: 5})
			st.LockState(ctx, k2, store.StateLock{ID: "y", RunID: 6})
			mine, err := st.StateLocksOfRun(ctx, 5)
			if err != nil || len(mine) != 1 || mine[0].Key.Layer != "a" {
				t.Fatalf("locks of run 5 = %+v, %v", mine, err)
			}
			released, err := st.ReleaseStateLocksOfRun(ctx, 5)
			if err != nil || len(released) != 1 {
				t.Fatalf("released = %+v, %v", released, err)
			}
			if l, _ := st.StateLockOf(ctx, k1); l != nil {
				t.Fatal("the lost run's state lock stayed")
			}
			if l, _ := st.StateLockOf(ctx, k2); l == nil {
				t.Fatal("another run's state lock was released")
			}
		})
	}
}

func TestStateCredentialsLiveWhileTheirRunHoldsTheSlot(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			run, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "r", Target: "net"})
			if err != nil {
				t.Fatal(err)
			}
			key := store.StateKey{Repo: "r", Layer: "net"}
			hash := store.HashStateToken("token-1")
			if err := st.IssueStateCredential(ctx, store.StateCredential{Key: key, RunID: run.ID, Mode: store.StateRead}, hash); err != nil {
				t.Fatal(err)
			}
			if err := st.IssueStateCredential(ctx, store.StateCredential{Key: key, RunID: run.ID, Mode: "admin"}, store.HashStateToken("t2")); err == nil {
				t.Fatal("a credential of mode admin was issued")
			}
			if _, _, err := st.StateCredentialOf(ctx, store.HashStateToken("token-2")); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("unknown token: %v", err)
			}
			c, live, err := st.StateCredentialOf(ctx, hash)
			if err != nil || live || c.Mode != store.StateRead || c.Key.Workspace != "default" || c.RunID != run.ID {
				t.Fatalf("before the slot: %+v, live %v, %v; want not live", c, live, err)
			}
			if ok, err := st.TakeSlot(ctx, "r", "net", run.ID); !ok || err != nil {
				t.Fatalf("take slot: %v %v", ok, err)
			}
			if _, live, _ := st.StateCredentialOf(ctx, hash); !live {
				t.Fatal("not live while the run holds the slot")
			}
			if err := st.ReleaseSlot(ctx, "r", "net", run.ID); err != nil {
				t.Fatal(err)
			}
			if _, live, _ := st.StateCredentialOf(ctx, hash); live {
				t.Fatal("live after the run released its slot")
			}
			st.TakeSlot(ctx, "r", "net", run.ID)
			if err := st.FinishRun(ctx, run.ID, store.RunSucceeded, "success", ""); err != nil {
				t.Fatal(err)
			}
			if _, live, _ := st.StateCredentialOf(ctx, hash); live {
				t.Fatal("live after the run ended")
			}
			if err := st.RevokeStateCredentials(ctx, run.ID); err != nil {
				t.Fatal(err)
			}
			if _, _, err := st.StateCredentialOf(ctx, hash); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("revoked credential: %v", err)
			}
		})
	}
}
