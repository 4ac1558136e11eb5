package layers

import (
	"errors"
	"fmt"

	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/report"
)

// layerOutcome is what a layer's part of a plan comment reports.
type layerOutcome int

const (
	// layerChanged: planned with changes, to apply or unlock.
	layerChanged layerOutcome = iota
	// layerUnchanged: planned, nothing to do.
	layerUnchanged
	// layerBlocked: another pull request holds the lock; nothing ran.
	layerBlocked
	// layerCancelled: the plan did not run or was stopped.
	layerCancelled
	// layerFailed: Terraform or Strata failed; no plan.
	layerFailed
)

func (r layerReport) outcome() layerOutcome {
	switch {
	case r.BlockedBy > 0:
		return layerBlocked
	case r.Cancelled:
		return layerCancelled
	case r.Error != "" || r.Result == nil:
		return layerFailed
	case r.Result.HasChanges:
		return layerChanged
	default:
		return layerUnchanged
	}
}

// planComment renders the plans of one command, several layers, as one
// comment: terraform.PlanComment, the CLI's too, with where each layer was
// planned and, after each layer with changes or without a plan, its policy
// findings and what to comment next.
func planComment(layers []layerReport) string {
	return planCommentOf(layers).Markdown()
}

func planCommentOf(layers []layerReport) terraform.PlanComment {
	var c terraform.PlanComment
	changed := 0
	for _, l := range layers {
		s := terraform.LayerReport{Layer: l.Layer, Result: l.Result, Dir: l.Dir, Workspace: l.Workspace, LogURL: l.LogURL}
		if l.HeadSHA != "" {
			s.Commit = report.Short(l.HeadSHA)
		}
		if l.Error != "" {
			s.Err = errors.New(l.Error)
		}
		o := l.outcome()
		switch o {
		case layerChanged:
			changed++
		case layerBlocked:
			s.Stopped = "blocked"
		case layerCancelled:
			s.Stopped = "cancelled"
		}
		if o != layerUnchanged {
			// A layer without changes is one line: nothing to do.
			s.Next = l.Policy.lines(l.Layer) + l.next()
		}
		c.Layers = append(c.Layers, s)
	}
	if changed > 1 {
		c.End = "To apply them all at once: `/apply` applies every layer this pull request has a plan of."
	}
	return c
}

// next is the line that tells what to do about a layer, as the commands to
// comment.
func (l layerReport) next() string {
	apply, unlock, plan := markdown.Quote("/apply "+l.Layer), markdown.Quote("/unlock "+l.Layer), markdown.Quote("/plan "+l.Layer)
	switch l.outcome() {
	case layerChanged:
		if l.OnMerge {
			return l.nextOnMerge(apply, unlock)
		}
		if l.CodeOwners != "" {
			return "Next: code owners must approve first, as " + apply + " would be refused now: " + l.CodeOwners + ". Then " + apply + " to apply."
		}
		if l.LocksOnApply {
			// The plan took no lock: there is none to unlock.
			return "Next: " + apply + " to apply; the layer locks on apply, so this plan holds no lock."
		}
		return "Next: " + apply + " to apply, " + unlock + " to drop the plan and the lock."
	case layerBlocked:
		return fmt.Sprintf("Next: once #%d is merged or closed, or releases the lock with %s, comment %s again.", l.BlockedBy, unlock, plan)
	case layerCancelled:
		return "Next: " + plan + " to plan it again."
	}
	if l.LocksOnApply {
		return "Next: " + plan + " to plan again once the cause is fixed."
	}
	return "Next: " + plan + " to plan again once the cause is fixed, " + unlock + " to drop the lock."
}

// nextOnMerge is the next step of a layer that applies on merge
// (auto_apply: on_merge): merging applies it, if the plan of the merge
// commit makes these changes; /apply still applies it before.
func (l layerReport) nextOnMerge(apply, unlock string) string {
	how := "merging applies it: Strata plans the merge commit and applies that plan only if it makes these changes (" + apply + " applies it now instead"
	if !l.LocksOnApply {
		how += ", " + unlock + " drops the plan and the lock"
	}
	how += ")."
	if l.CodeOwners != "" {
		return "Next: code owners must approve first, as neither " + apply + " nor the merge would apply it now: " + l.CodeOwners + ". Then " + how
	}
	return "Next: " + how
}
