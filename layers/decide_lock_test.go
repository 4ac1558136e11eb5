package layers

import (
	"slices"
	"strings"
	"testing"

	"strata.dev/strata/config"
	"strata.dev/strata/store"
)

// /apply by #7 of layers that lock on plan or on apply, with the layer's
// lock and last apply as facts: who may apply, whose plan is stale, which
// locks the apply takes.
func TestDecideApplyLockModes(t *testing.T) {
	onApply := func(l config.Layer) config.Layer {
		l.Lock = config.LockOnApply
		return l
	}
	at := func(layer string, gen int64) *store.Plan {
		p := plan(layer, head, true, false)
		p.BaseGeneration = gen
		return p
	}
	byOne := map[string]store.LayerApplied{"network": {Generation: 3, PR: 1}}
	for _, tc := range []struct {
		name    string
		layers  []config.Layer
		plans   []*store.Plan
		locks   map[string]int
		applies map[string]store.LayerApplied
		// want: run and take, or the refused layers and parts of the reason.
		run, take []string
		refused   []string
		reason    []string
	}{
		{name: "on_apply, nobody holds it: runs, taking the lock", layers: []config.Layer{onApply(network)},
			plans: []*store.Plan{at("network", 0)}, run: []string{"network"}, take: []string{"network"}},
		{name: "on_apply, this PR holds it already: runs, takes nothing", layers: []config.Layer{onApply(network)},
			plans: []*store.Plan{at("network", 3)}, locks: map[string]int{"network": 7}, applies: map[string]store.LayerApplied{"network": {Generation: 3, PR: 7}},
			run: []string{"network"}},
		{name: "on_apply, #1 applied it after this plan: locked by #1 and stale", layers: []config.Layer{onApply(network)},
			plans: []*store.Plan{at("network", 2)}, locks: map[string]int{"network": 1}, applies: byOne,
			refused: []string{"network"}, reason: []string{"locked by #1", "stale", "`/plan network`"}},
		{name: "on_apply, #1 holds it, plan made after its apply: locked by #1", layers: []config.Layer{onApply(network)},
			plans: []*store.Plan{at("network", 3)}, locks: map[string]int{"network": 1}, applies: byOne,
			refused: []string{"network"}, reason: []string{"locked by #1", "until it is merged or closed"}},
		{name: "on_apply, #1 applied and was merged since this plan: stale", layers: []config.Layer{onApply(network)},
			plans: []*store.Plan{at("network", 2)}, applies: byOne,
			refused: []string{"network"}, reason: []string{"#1 applied this layer after this plan was made", "`/plan network`"}},
		{name: "on_apply, planned after #1's apply and merge: runs", layers: []config.Layer{onApply(network)},
			plans: []*store.Plan{at("network", 3)}, applies: byOne, run: []string{"network"}, take: []string{"network"}},
		{name: "on_plan, held, but applied by another PR since: stale", layers: []config.Layer{network},
			plans: []*store.Plan{at("network", 2)}, locks: map[string]int{"network": 7}, applies: byOne,
			refused: []string{"network"}, reason: []string{"stale"}},
		{name: "on_plan, not held: refused as today", layers: []config.Layer{network},
			plans: []*store.Plan{at("network", 3)}, applies: byOne,
			refused: []string{"network"}, reason: []string{"does not hold the layer's lock"}},
		{name: "on_plan and on_apply together: takes only the on_apply lock", layers: []config.Layer{network, onApply(dns)},
			plans: []*store.Plan{at("network", 0), at("dns", 0)}, locks: map[string]int{"network": 7},
			run: []string{"network", "dns"}, take: []string{"dns"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.locks == nil {
				tc.locks = map[string]int{}
			}
			d := decideApply(applyFacts{PR: 7, Head: head, Layers: tc.layers, All: all, Plans: tc.plans, Locks: tc.locks, Applies: tc.applies})
			if tc.refused != nil {
				if !slices.Equal(d.Refuse, tc.refused) || d.Run != nil {
					t.Fatalf("decision = %+v, want %v refused", d, tc.refused)
				}
				for _, part := range tc.reason {
					if !strings.Contains(d.Reason, part) {
						t.Errorf("reason %q does not say %q", d.Reason, part)
					}
				}
				return
			}
			if !slices.Equal(names(d.Run), tc.run) || !slices.Equal(d.Take, tc.take) || d.Refuse != nil {
				t.Errorf("decision = %+v, want %v run, %v taken", d, tc.run, tc.take)
			}
		})
	}
}

// A plan job: with on_plan it runs only for the lock's holder; with
// on_apply for anyone, unless another PR took the lock with its apply.
func TestPlanLockGone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		onApply bool
		lock    *store.Lock
		want    string
	}{
		{"on_plan, held by this PR", false, &store.Lock{PR: 7}, ""},
		{"on_plan, released", false, nil, "no longer holds the lock"},
		{"on_plan, held by another PR", false, &store.Lock{PR: 8}, "no longer holds the lock"},
		{"on_apply, free", true, nil, ""},
		{"on_apply, held by this PR (it applied)", true, &store.Lock{PR: 7}, ""},
		{"on_apply, another PR applied it", true, &store.Lock{PR: 8}, "#8 applied this layer"},
	} {
		got := planLockGone(tc.onApply, tc.lock, 7)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A plan of an on_apply layer that nobody holds takes no lock and shows
// none; the other outcomes are those of on_plan.
func TestLockOutcomeFree(t *testing.T) {
	if got := lockOutcomeOf(nil, true, head); got != lockFree {
		t.Errorf("nobody holds it, none taken: %s, want %s", got, lockFree)
	}
	if got := lockOutcomeOf(&store.Lock{PR: 8, HeadSHA: head}, false, head); got != lockBlocked {
		t.Errorf("another PR applied it: %s, want %s", got, lockBlocked)
	}
}

// A plan is stale when the layer was applied after it was made.
func TestPlanStale(t *testing.T) {
	for _, tc := range []struct {
		base, last int64
		want       bool
	}{{0, 0, false}, {0, 1, true}, {2, 2, false}, {1, 3, true}} {
		if got := planStale(&store.Plan{BaseGeneration: tc.base}, store.LayerApplied{Generation: tc.last}); got != tc.want {
			t.Errorf("plan at %d, layer at %d: stale %v, want %v", tc.base, tc.last, got, tc.want)
		}
	}
}
