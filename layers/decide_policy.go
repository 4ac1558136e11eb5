package layers

import (
	"fmt"
	"strings"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/policy"
	"strata.dev/strata/store"
)

// setOutcome is what one policy set found in a plan, as stored with the
// evaluation (redacted) and shown in the check, the comment and the web UI.
type setOutcome struct {
	Name        string             `json:"name"`
	Enforcement config.Enforcement `json:"enforcement"`
	Owners      []string           `json:"owners,omitempty"`
	// Denials and Warnings are the first findings (maxStoredFindings);
	// the counts say how many there were.
	Denials      []policy.Finding `json:"denials,omitempty"`
	Warnings     []policy.Finding `json:"warnings,omitempty"`
	DenialCount  int              `json:"denial_count,omitempty"`
	WarningCount int              `json:"warning_count,omitempty"`
	// Error is why the set could not judge the plan (Rego errors with
	// their file and line, a missing path, the time limit): it counts as
	// a denial, which an owner may approve.
	Error string `json:"error,omitempty"`
}

// failed says whether the set denies the plan (or could not judge it).
func (o setOutcome) failed() bool { return o.DenialCount > 0 || o.Error != "" }

// blocks says whether the set's failure keeps the layer from being applied.
func (o setOutcome) blocks() bool { return o.failed() && o.Enforcement == config.Block }

// policyState is where a plan stands with the layer's policy sets.
type policyState int

const (
	// policyNone: no set judges the layer.
	policyNone policyState = iota
	// policyPending: sets judge the layer, but not this plan (yet).
	policyPending
	// policyPassed: no set denies the plan.
	policyPassed
	// policyWarned: only warnings, or denials of warn sets.
	policyWarned
	// policyApproved: block sets deny it, and an owner of each approved.
	policyApproved
	// policyBlocked: a block set denies it and no owner of it approved.
	policyBlocked
)

// policyFacts are what the gate decides on: whether sets judge the layer
// (the default branch's config and the server's), the plan to apply, its
// evaluation and the approvals of it.
type policyFacts struct {
	Judged     bool
	Plan       *store.Plan
	Evaluation *store.PolicyEvaluation
	Sets       []setOutcome
	Approvals  []store.PolicyApproval
}

// policyVerdict is the gate's answer: the state, and the block sets that
// deny the plan with no owner's approval.
type policyVerdict struct {
	State      policyState
	Unapproved []setOutcome
}

// policyGate decides whether the layer's policy sets let its plan be
// applied: /apply, the Apply button and the apply on merge ask it. Only an
// evaluation of this very plan (its head and when it was made) counts, and
// only approvals of that plan: a new commit or a new plan needs both anew.
func policyGate(f policyFacts) policyVerdict {
	if !f.Judged {
		return policyVerdict{State: policyNone}
	}
	if f.Plan == nil || f.Evaluation == nil || f.Evaluation.HeadSHA != f.Plan.HeadSHA || !f.Evaluation.PlanAt.Equal(f.Plan.CreatedAt) {
		return policyVerdict{State: policyPending}
	}
	approved := map[string]bool{}
	for _, a := range f.Approvals {
		if a.HeadSHA == f.Plan.HeadSHA && a.PlanAt.Equal(f.Plan.CreatedAt) {
			approved[a.Set] = true
		}
	}
	v := policyVerdict{State: policyPassed}
	blocked := false
	for _, s := range f.Sets {
		switch {
		case s.blocks() && !approved[s.Name]:
			v.Unapproved = append(v.Unapproved, s)
		case s.blocks():
			blocked = true
		case s.failed() || s.WarningCount > 0:
			if v.State == policyPassed {
				v.State = policyWarned
			}
		}
	}
	switch {
	case len(v.Unapproved) > 0:
		v.State = policyBlocked
	case blocked:
		v.State = policyApproved
	}
	return v
}

// refusal is why an apply of layer is refused, "" when the gate lets it.
func (v policyVerdict) refusal(layer string) string {
	switch v.State {
	case policyPending:
		return fmt.Sprintf("%s: its policy sets have not judged this plan yet; wait for the %s check, or run %s",
			markdown.Quote(layer), markdown.Quote("strata/policy: "+layer), markdown.Quote("/plan "+layer))
	case policyBlocked:
		return fmt.Sprintf("%s: blocked by policy: %s", markdown.Quote(layer), approvalsNeeded(layer, v.Unapproved))
	}
	return ""
}

// approvalsNeeded says who must approve what: each set with its owners.
func approvalsNeeded(layer string, sets []setOutcome) string {
	parts := make([]string, len(sets))
	for i, s := range sets {
		parts[i] = fmt.Sprintf("set %s by %s", markdown.Quote(s.Name), ownerNames(s.Owners))
	}
	return markdown.Quote("/approve-policies "+layer) + " from an owner of each set that denies the plan: " + strings.Join(parts, "; ")
}

// ownerNames lists owners as mentions: "@alice or @acme/platform".
func ownerNames(owners []string) string {
	if len(owners) == 0 {
		return "no owner (the set names none)"
	}
	out := make([]string, len(owners))
	for i, o := range owners {
		out[i] = "@" + strings.TrimPrefix(o, "@")
	}
	return strings.Join(out, " or ")
}
