package layers

import (
	"context"

	"strata.dev/strata/jobs"
	"strata.dev/strata/policy"
	"strata.dev/strata/worker"
)

// policyLookup finds which policy sets judge a layer (policiesOf) while
// Terraform plans it: the plan keeps its JSON, tens of MB for a large
// plan held until the run ends, only when a set will read it.
type policyLookup struct {
	done chan struct{}
	lp   *layerPolicy
	err  error
}

// lookUpPolicies starts finding the sets that judge the plan job's layer.
// The lookup ends with ctx, the run's.
func lookUpPolicies(ctx context.Context, d *worker.Deps, a jobs.LayerPlan) *policyLookup {
	return startLookup(ctx, func(ctx context.Context) (*layerPolicy, error) {
		return policiesOf(ctx, d, a.Repo, a.HeadSHA, a.Layer)
	})
}

// startLookup runs find in a goroutine of its own, which ends when find
// returns: find must return once ctx ends.
func startLookup(ctx context.Context, find func(context.Context) (*layerPolicy, error)) *policyLookup {
	l := &policyLookup{done: make(chan struct{})}
	go func() {
		defer close(l.done)
		l.lp, l.err = find(ctx)
	}()
	return l
}

// wait is what the lookup found, once it ended, or ctx's cause when ctx
// ends first.
func (l *policyLookup) wait(ctx context.Context) (*layerPolicy, error) {
	select {
	case <-l.done:
		return l.lp, l.err
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// keepJSON is how much of the plan's JSON to keep
// (terraform.PlanInput.KeepJSON): as much as the policies evaluate when a
// set judges the layer, else none. A name no set has judges nothing, and a
// lookup that failed judges nothing either (judgePlan says so). It waits
// for the lookup, which ends at the latest with the run's context, the
// plan's.
func (l *policyLookup) keepJSON() int64 {
	<-l.done
	if l.err != nil || len(l.lp.Sets) == 0 {
		return 0
	}
	return policy.MaxPlanJSON
}
