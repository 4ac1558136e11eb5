package store_test

import (
	"context"
	"testing"
	"time"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// A repository with plans of two layers (one planned twice), an apply of
// both, a drift run and a release test; another repository plans too. The
// web UI's lists see each layer's runs, the latest of each kind and
// target, and the repository's locks and takeovers only.
func TestUIQueries(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			job := int64(0)
			start := func(repo, kind, target string) *store.Run {
				t.Helper()
				job++
				r, err := st.StartRun(ctx, store.Run{JobID: job, Attempt: 1, Kind: kind, Repo: repo, PR: 1, Target: target})
				if err != nil {
					t.Fatal(err)
				}
				if err := st.AppendLog(ctx, r.ID, "log of "+target); err != nil {
					t.Fatal(err)
				}
				return r
			}
			net1 := start("acme/infra", "layer_plan", "net_a")
			start("acme/infra", "layer_plan", "dns")
			net2 := start("acme/infra", "layer_plan", "net_a")
			apply := start("acme/infra", "layer_apply", "dns,net_a")
			// The "_" of net_a is no LIKE wildcard: netXa is another layer.
			start("acme/infra", "layer_apply", "netXa")
			drift := start("acme/infra", "drift_run", "net_a")
			start("acme/infra", "release_test", "api")
			start("acme/other", "layer_plan", "net_a")

			got, err := st.RunsOfTarget(ctx, store.TargetRuns{Repo: "acme/infra", Target: "net_a",
				Kinds: []string{"layer_plan", "drift_run"}, ListKinds: []string{"layer_apply"}, Limit: 10})
			if err != nil {
				t.Fatal(err)
			}
			if want := []int64{drift.ID, apply.ID, net2.ID, net1.ID}; !sameIDs(got, want) {
				t.Fatalf("RunsOfTarget(net_a) = %v, want %v", ids(got), want)
			}
			if got[0].Log != "" {
				t.Errorf("a listed run carries its log %q", got[0].Log)
			}
			if got, _ := st.RunsOfTarget(ctx, store.TargetRuns{Repo: "acme/infra", Target: "net_a",
				Kinds: []string{"layer_plan"}, Limit: 1}); !sameIDs(got, []int64{net2.ID}) {
				t.Errorf("RunsOfTarget limited to 1 = %v, want %d", ids(got), net2.ID)
			}

			latest, err := st.LatestRuns(ctx, "acme/infra", "layer_plan", "release_test")
			if err != nil {
				t.Fatal(err)
			}
			targets := map[string]int64{}
			for _, r := range latest {
				targets[r.Kind+" "+r.Target] = r.ID
			}
			if len(targets) != 3 || targets["layer_plan net_a"] != net2.ID || targets["layer_plan dns"] == 0 || targets["release_test api"] == 0 {
				t.Errorf("LatestRuns = %v", targets)
			}

			for _, l := range []store.Lock{{Repo: "acme/infra", Layer: "net_a", PR: 1, Holder: "alice"}, {Repo: "acme/other", Layer: "x", PR: 2}} {
				if _, _, err := st.TryLock(ctx, l); err != nil {
					t.Fatal(err)
				}
			}
			if locks, err := st.LocksOfRepo(ctx, "acme/infra"); err != nil || len(locks) != 1 || locks[0].Layer != "net_a" || locks[0].Holder != "alice" {
				t.Errorf("LocksOfRepo = %+v, %v", locks, err)
			}
			until := time.Now().Add(time.Hour)
			for _, tk := range []store.Takeover{{Repo: "acme/infra", Sync: "dev", PR: 1, Holder: "alice", ExpiresAt: until}, {Repo: "acme/other", Sync: "dev", PR: 2, ExpiresAt: until}} {
				if _, _, err := st.TryTakeover(ctx, tk); err != nil {
					t.Fatal(err)
				}
			}
			if tks, err := st.TakeoversOfRepo(ctx, "acme/infra"); err != nil || len(tks) != 1 || tks[0].Sync != "dev" || tks[0].PR != 1 {
				t.Errorf("TakeoversOfRepo = %+v, %v", tks, err)
			}
		})
	}
}

func ids(runs []*store.Run) []int64 {
	var out []int64
	for _, r := range runs {
		out = append(out, r.ID)
	}
	return out
}

func sameIDs(runs []*store.Run, want []int64) bool {
	got := ids(runs)
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if got[i] != want[i] {
			return false
		}
	}
	return true
}
