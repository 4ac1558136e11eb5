package layers

import (
	"fmt"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/store"
)

// The decisions of a layer's lock mode (lock: on_plan|on_apply) and of its
// base: every apply of a layer moves its generation on, and a plan made at
// an older generation was made before another apply of the layer. With
// on_apply, several PRs plan one layer, the first /apply takes the lock,
// and the others' plans are stale.

// lockForApply is what an /apply does about the lock of a layer it may
// apply (the plan is of the head and not applied): refuse with why, or go,
// taking the lock first when take.
func lockForApply(l config.Layer, pr int, holder int, held bool, p *store.Plan, last store.LayerApplied) (why string, take bool) {
	otherHolds := held && holder != pr
	stale := p.BaseGeneration < last.Generation
	switch {
	case !l.LocksOnApply() && (!held || otherHolds):
		return fmt.Sprintf("%s: this pull request does not hold the layer's lock; %s", markdown.Quote(l.Name), staleMessage), false
	case otherHolds && stale:
		return fmt.Sprintf("%s is locked by #%d, which applied it after this plan was made, so the plan is stale. "+
			"#%d holds the lock until it is merged or closed; then plan again with `/plan %s`.", markdown.Quote(l.Name), holder, holder, l.Name), false
	case otherHolds:
		return lockedByApply(l.Name, holder), false
	case stale:
		return staleByApply(l.Name, last), false
	}
	return "", l.LocksOnApply() && !held
}

// lockedByApply refuses an /apply of a layer whose lock another PR took
// with its apply.
func lockedByApply(layer string, holder int) string {
	return fmt.Sprintf("%s is locked by #%d, which applied it: #%d holds the lock until it is merged or closed "+
		"(or releases it with `/unlock %s`). Apply again after that.", markdown.Quote(layer), holder, holder, layer)
}

// staleByApply says that an apply of the layer made a plan stale.
func staleByApply(layer string, last store.LayerApplied) string {
	return fmt.Sprintf("%s: #%d applied this layer after this plan was made, so the plan is stale; "+
		"plan again with `/plan %s`.", markdown.Quote(layer), last.PR, layer)
}

// planStale reports whether a plan was made before the layer's last apply.
func planStale(p *store.Plan, last store.LayerApplied) bool {
	return p.BaseGeneration < last.Generation
}

// planLockGone says why a plan job must not run for pr, by the layer's
// lock mode and its lock as it is now (nil when free), or "". With on_plan,
// the plan runs only for the holder; with on_apply, for anyone unless
// another PR took the lock with its apply.
func planLockGone(onApply bool, lock *store.Lock, pr int) string {
	switch {
	case !onApply && (lock == nil || lock.PR != pr):
		return "the pull request no longer holds the lock on this layer"
	case onApply && lock != nil && lock.PR != pr:
		return fmt.Sprintf("#%d applied this layer and holds its lock until it is merged or closed", lock.PR)
	}
	return ""
}
