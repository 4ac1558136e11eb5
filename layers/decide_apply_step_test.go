package layers

import (
	"testing"
	"time"

	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
)

// TestApplyStepRefusal: what changed while an apply job waited for its
// layer's slot refuses the layer, by the rules /apply decided on.
func TestApplyStepRefusal(t *testing.T) {
	app := jobs.LayerSpec{Name: "app", DependsOn: []string{"net"}}
	onApply := jobs.LayerSpec{Name: "app", LockOnApply: true}
	plan := &store.Plan{Layer: "app", HeadSHA: "h", HasChanges: true, BaseGeneration: 2}
	netPending := &store.Plan{Layer: "net", HeadSHA: "h", HasChanges: true}
	netApplied := &store.Plan{Layer: "net", HeadSHA: "h", HasChanges: true, AppliedAt: time.Unix(1, 0)}
	mine, theirs := &store.Lock{Layer: "app", PR: 1}, &store.Lock{Layer: "app", PR: 3}
	for _, tc := range []struct {
		name string
		spec jobs.LayerSpec
		f    stepFacts
		want string
	}{
		{"held, its dependency applied before it: applies", app,
			stepFacts{AtHead: map[string]*store.Plan{"app": plan, "net": netApplied}, Plan: plan, Lock: mine, Last: store.LayerApplied{Generation: 2}}, ""},
		{"its dependency has changes not applied", app,
			stepFacts{AtHead: map[string]*store.Plan{"app": plan, "net": netPending}, Plan: plan, Lock: mine},
			"`app` depends on `net`, whose plan is not applied yet; apply `net` first (or both together)."},
		{"the plan is gone (a new push, a new plan)", app,
			stepFacts{AtHead: map[string]*store.Plan{}, Lock: mine}, "plan is stale, run /plan"},
		{"on_plan, unlocked since", app,
			stepFacts{AtHead: map[string]*store.Plan{"app": plan}, Plan: plan},
			"`app`: this pull request does not hold the layer's lock; plan is stale, run /plan"},
		{"on_apply, the lock /apply took released since", onApply,
			stepFacts{AtHead: map[string]*store.Plan{"app": plan}, Plan: plan},
			"this pull request no longer holds the lock on `app`"},
		{"on_apply, another PR applied it and holds the lock", onApply,
			stepFacts{AtHead: map[string]*store.Plan{"app": plan}, Plan: plan, Lock: theirs, Last: store.LayerApplied{Generation: 2, PR: 3}},
			"`app` is locked by #3, which applied it: #3 holds the lock until it is merged or closed (or releases it with `/unlock app`). Apply again after that."},
		{"held, but another apply of the layer since the plan", onApply,
			stepFacts{AtHead: map[string]*store.Plan{"app": plan}, Plan: plan, Lock: mine, Last: store.LayerApplied{Generation: 3, PR: 3}},
			"`app`: #3 applied this layer after this plan was made, so the plan is stale; plan again with `/plan app`."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := applyStepRefusal(tc.spec, 1, tc.f); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
