package layers

import (
	"context"
	"fmt"
	"strings"

	"strata.dev/strata/access"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// /unlock LAYER also clears Terraform's state lock on the named layers'
// managed state (docs/state.md), when one is stuck: a run killed before
// Terraform unlocked, or one the server did not yet declare lost. Clearing
// it lets a second Terraform write over the first, so it takes an admin
// (access.StateUnlock); a writer's /unlock keeps releasing the PR's layer
// lock and is told the state lock needs an admin.

// unlockStateLocks clears the state locks of the named layers for an admin
// and says what it did, or says who may; "" when none is held.
func unlockStateLocks(ctx context.Context, d *worker.Deps, c *worker.CommandContext, names []string) (string, error) {
	a := c.Job
	var held []*store.StateLock
	for _, n := range names {
		locks, err := d.Store.StateLocksOfLayer(ctx, a.FullName, n)
		if err != nil {
			return "", err
		}
		held = append(held, locks...)
	}
	if len(held) == 0 {
		return "", nil
	}
	decision, err := d.Authorize(ctx, c.PR, a.User, access.StateUnlock)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if !decision.Allowed {
		fmt.Fprintf(&b, "Terraform's state lock on %s stays: %s", stateLocksNamed(held), decision.Reason)
		return b.String(), nil
	}
	for _, l := range held {
		if err := d.Store.UnlockState(ctx, l.Key, ""); err != nil {
			return "", err
		}
	}
	fmt.Fprintf(&b, "@%s cleared Terraform's state lock on %s.", a.User, stateLocksNamed(held))
	return b.String(), nil
}

// stateLocksNamed names state locks as a reply does: each layer (with its
// workspace when not default) and the run that took it.
func stateLocksNamed(locks []*store.StateLock) string {
	var parts []string
	for _, l := range locks {
		s := markdown.Quote(l.Key.Layer)
		if l.Key.Workspace != "default" {
			s += " (workspace " + markdown.Quote(l.Key.Workspace) + ")"
		}
		if l.RunID != 0 {
			s += fmt.Sprintf(" (taken by run %d)", l.RunID)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}
