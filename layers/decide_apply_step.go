package layers

import (
	"fmt"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
)

// stepFacts are what the apply job reads of a layer, holding its slot,
// before it applies the layer's plan.
type stepFacts struct {
	// AtHead are the PR's plans at the applied head, by layer.
	AtHead map[string]*store.Plan
	// Plan is the layer's sealed plan at the head; nil when there is none
	// or it cannot be unsealed.
	Plan *store.Plan
	// Lock is the layer's lock; nil when free.
	Lock *store.Lock
	// Last is the layer's last apply (its generation).
	Last store.LayerApplied
}

// applyStepRefusal says why the apply job must not apply l's plan for pr
// any more, or "": what /apply decided (decideApply) may have changed
// while the job waited. The same rules decide: depends_on
// (unmetDependencies; the layers before l in this apply are applied by
// now), then the lock (lockForApply, whose lock /apply took for on_apply
// already, so a free lock was released since).
func applyStepRefusal(spec jobs.LayerSpec, pr int, f stepFacts) string {
	l := config.Layer{Name: spec.Name, DependsOn: spec.DependsOn}
	if spec.LockOnApply {
		l.Lock = config.LockOnApply
	}
	if why := unmetDependencies([]config.Layer{l}, f.AtHead); why != "" {
		return why
	}
	if f.Plan == nil {
		return staleMessage
	}
	holder, held := 0, f.Lock != nil
	if held {
		holder = f.Lock.PR
	}
	why, take := lockForApply(l, pr, holder, held, f.Plan, f.Last)
	if take {
		return fmt.Sprintf("this pull request no longer holds the lock on %s", markdown.Quote(l.Name))
	}
	return why
}
