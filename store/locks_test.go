package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

func TestLocks(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			l := store.Lock{Repo: "acme/infra", Layer: "net", PR: 1, HeadSHA: "a1", Holder: "alice", InstallationID: 7}
			held, ok, err := st.TryLock(ctx, l)
			if err != nil || !ok || held.PR != 1 {
				t.Fatalf("first lock: %+v %v %v", held, ok, err)
			}
			// PR #2 is blocked and told who holds it.
			held, ok, err = st.TryLock(ctx, store.Lock{Repo: "acme/infra", Layer: "net", PR: 2, HeadSHA: "b1", Holder: "bob"})
			if err != nil || ok || held.PR != 1 || held.Holder != "alice" {
				t.Fatalf("second PR: %+v %v %v", held, ok, err)
			}
			// The holder planning a new head keeps it; the head moves.
			l.HeadSHA = "a2"
			if _, ok, _ := st.TryLock(ctx, l); !ok {
				t.Fatal("holder lost its lock")
			}
			if cur, _ := st.Lock(ctx, "acme/infra", "net"); cur.HeadSHA != "a2" || cur.InstallationID != 7 {
				t.Fatalf("lock after new head = %+v", cur)
			}
			if err := st.SavePlan(ctx, store.Plan{Repo: "acme/infra", PR: 1, Layer: "net", HeadSHA: "a2", PlanFile: []byte{1}}); err != nil {
				t.Fatal(err)
			}
			if gone, _ := st.Unlock(ctx, "acme/infra", "net", 2); gone != nil {
				t.Fatal("PR #2 released #1's lock")
			}
			if gone, err := st.Unlock(ctx, "acme/infra", "net", 1); err != nil || gone == nil {
				t.Fatalf("unlock: %v %v", gone, err)
			}
			if _, err := st.PlanAt(ctx, "acme/infra", 1, "net", "a2"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("plan kept after unlock: %v", err)
			}
			if _, ok, _ := st.TryLock(ctx, store.Lock{Repo: "acme/infra", Layer: "net", PR: 2, HeadSHA: "b1", Holder: "bob"}); !ok {
				t.Error("PR #2 could not lock a free layer")
			}
		})
	}
}

// Many PRs racing for one layer: exactly one wins.
func TestLockRace(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			st := storetest.Open(t, d)
			var wg sync.WaitGroup
			var mu sync.Mutex
			winners := 0
			for pr := 1; pr <= 8; pr++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					_, ok, err := st.TryLock(context.Background(), store.Lock{Repo: "r", Layer: "l", PR: pr, HeadSHA: "s", Holder: "u"})
					if err != nil {
						t.Error(err)
					}
					if ok {
						mu.Lock()
						winners++
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			if winners != 1 {
				t.Fatalf("%d PRs hold the lock", winners)
			}
		})
	}
}

func TestLayerSlot(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			a, _ := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "r"})
			b, _ := st.StartRun(ctx, store.Run{JobID: 2, Attempt: 1, Kind: "layer_plan", Repo: "r"})
			if ok, err := st.TakeSlot(ctx, "r", "l", a.ID); !ok || err != nil {
				t.Fatalf("a: %v %v", ok, err)
			}
			if ok, _ := st.TakeSlot(ctx, "r", "l", b.ID); ok {
				t.Fatal("b took the slot a holds")
			}
			// a's process dies: its run is declared lost, and b takes over.
			if lost := storetest.DeclareLost(t, st, -time.Second); len(lost) == 0 {
				t.Fatal("no run declared lost")
			}
			c, _ := st.StartRun(ctx, store.Run{JobID: 3, Attempt: 1, Kind: "layer_plan", Repo: "r"})
			if ok, _ := st.TakeSlot(ctx, "r", "l", c.ID); !ok {
				t.Fatal("slot of a lost run was not taken over")
			}
			if err := st.ReleaseSlot(ctx, "r", "l", c.ID); err != nil {
				t.Fatal(err)
			}
			if ok, _ := st.TakeSlot(ctx, "r", "l", b.ID); !ok {
				t.Fatal("released slot not free")
			}
		})
	}
}
