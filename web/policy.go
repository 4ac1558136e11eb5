package web

import (
	"context"
	"encoding/json"
	"errors"

	"strata.dev/strata/store"
)

// layerPolicy is the policy state of a layer's last judged plan
// (docs/governance.md): each set's outcome and the owners' approvals.
type layerPolicy struct {
	Evaluation *store.PolicyEvaluation
	PRURL      string
	Sets       []policySetView
	Approvals  []store.PolicyApproval
}

// policySetView is what the page shows of one set's outcome, read from
// the evaluation's JSON (layers/decide_policy.go writes it, redacted).
type policySetView struct {
	Name         string `json:"name"`
	Enforcement  string `json:"enforcement"`
	DenialCount  int    `json:"denial_count"`
	WarningCount int    `json:"warning_count"`
	Error        string `json:"error"`
}

// policyOf reads the layer's last evaluation and its approvals; nil when
// no set ever judged the layer.
func (u *UI) policyOf(ctx context.Context, repo Repo, layer string) (*layerPolicy, error) {
	st := u.opts.Deps.Store
	e, err := st.LastPolicyEvaluation(ctx, repo.FullName, layer)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	p := &layerPolicy{Evaluation: e, PRURL: u.opts.Deps.PRURL(repo.FullName, e.PR)}
	if err := json.Unmarshal([]byte(e.Sets), &p.Sets); err != nil {
		return nil, err
	}
	if p.Approvals, err = st.PolicyApprovals(ctx, repo.FullName, e.PR, layer, e.HeadSHA, e.PlanAt); err != nil {
		return nil, err
	}
	return p, nil
}
