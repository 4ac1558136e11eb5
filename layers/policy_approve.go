package layers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// approvePoliciesCommand answers /approve-policies [LAYER...]: the user
// approves, for the plans at the head, the denials of the block sets they
// own (a login of the set's owners, or a member of one of its teams).
// Anyone with read permission may ask; only owners count, and a
// non-owner's approval is refused with a reply naming the owners needed.
func approvePoliciesCommand(ctx context.Context, d *worker.Deps, c *worker.CommandContext, cmd command.Command) error {
	a, head := c.Job, c.PR.HeadSHA()
	all, err := repoLayers(ctx, d, a.Repo, head, c.Config)
	if err != nil {
		return err
	}
	plans, err := d.Store.PlansOfPR(ctx, a.FullName, a.PR)
	if err != nil {
		return err
	}
	layers := all
	if names := cmd.(command.ApprovePolicies).Layers; len(names) > 0 {
		if layers, err = pickLayers(all, names); err != nil {
			return c.Reply(ctx, fmt.Sprintf("@%s %s", a.User, err))
		}
	}
	facts, err := readPolicyFacts(ctx, d, a.FullName, a.PR, head, layers, c.Config.Repo, plans)
	if err != nil {
		return err
	}
	var approved, needed, notes []string
	for _, l := range layers {
		f := facts[l.Name]
		v := policyGate(f)
		if v.State != policyBlocked {
			if len(cmd.(command.ApprovePolicies).Layers) > 0 {
				notes = append(notes, markdown.Quote(l.Name)+": "+nothingToApprove(v.State))
			}
			continue
		}
		var mine []string
		for _, s := range v.Unapproved {
			owner, err := isOwner(ctx, c.PR, a.User, s.Owners)
			if err != nil {
				return err
			}
			if !owner {
				needed = append(needed, fmt.Sprintf("%s: set %s by %s", markdown.Quote(l.Name), markdown.Quote(s.Name), ownerNames(s.Owners)))
				continue
			}
			if err := d.Store.ApprovePolicy(ctx, store.PolicyApproval{Repo: a.FullName, PR: a.PR, Layer: l.Name, HeadSHA: f.Plan.HeadSHA,
				PlanAt: f.Plan.CreatedAt, Set: s.Name, Approver: a.User}); err != nil {
				return err
			}
			mine = append(mine, s.Name)
		}
		if len(mine) == 0 {
			continue
		}
		approved = append(approved, fmt.Sprintf("%s (%s)", markdown.Quote(l.Name), report.Names(mine)))
		if err := rewritePolicyCheck(ctx, d, c, l, plans); err != nil {
			return err
		}
	}
	return c.Reply(ctx, approvalReply(a.User, head, approved, needed, notes))
}

func nothingToApprove(s policyState) string {
	switch s {
	case policyNone:
		return "no policy set judges this layer."
	case policyPending:
		return "its policy sets have not judged a plan at this head; run `/plan` first."
	case policyApproved:
		return "already approved for this plan."
	}
	return "no block set denies its plan."
}

// approvalReply tells the user what their approval did, and who else
// must approve.
func approvalReply(user, head string, approved, needed, notes []string) string {
	var b strings.Builder
	switch {
	case len(approved) > 0:
		fmt.Fprintf(&b, "@%s approved the policy denials of %s for the plans at %s; a new commit or plan needs a new approval.", user, strings.Join(approved, ", "), report.Short(head))
	case len(needed) > 0:
		fmt.Fprintf(&b, "@%s `/approve-policies` refused: only an owner of a set that denies the plan may approve it.", user)
	case len(notes) == 0:
		fmt.Fprintf(&b, "@%s no layer of this pull request is blocked by policy at %s.", user, report.Short(head))
	default:
		fmt.Fprintf(&b, "@%s nothing to approve.", user)
	}
	if len(needed) > 0 {
		b.WriteString("\n\nStill needed, from an owner:\n")
		for _, n := range needed {
			b.WriteString("- " + n + "\n")
		}
	}
	for _, n := range notes {
		b.WriteString("\n- " + n)
	}
	return strings.TrimRight(b.String(), "\n")
}

// isOwner says whether user is one of owners: a login (GitHub's are case
// insensitive), or a member of an @org/team, through GitHub's API.
func isOwner(ctx context.Context, repo pull.Repository, user string, owners []string) (bool, error) {
	for _, o := range owners {
		org, slug, team := strings.Cut(strings.TrimPrefix(o, "@"), "/")
		if !team {
			if strings.EqualFold(org, user) {
				return true, nil
			}
			continue
		}
		members, err := repo.TeamMembers(ctx, org, slug)
		if errors.Is(err, pull.ErrNotFound) {
			continue // a team the App cannot see grants no one
		}
		if err != nil {
			return false, err
		}
		for _, m := range members {
			if strings.EqualFold(m, user) {
				return true, nil
			}
		}
	}
	return false, nil
}

// readPolicyFacts reads, for each layer, what policyGate decides on: the
// sets that judge it (the server's and the default branch's, as cfg has
// them), the PR's plan at head, its evaluation and its approvals.
func readPolicyFacts(ctx context.Context, d *worker.Deps, repo string, pr int, head string, layers []config.Layer, cfg *config.Repo, plans []*store.Plan) (map[string]policyFacts, error) {
	sets := d.Config.ServerPolicySets()
	if cfg != nil {
		sets = append(sets, cfg.Policies...)
	}
	atHead := plansAt(plans, head)
	out := map[string]policyFacts{}
	for _, l := range layers {
		chosen, unknown := config.PolicySetsOf(l, sets)
		f := policyFacts{Judged: len(chosen)+len(unknown) > 0, Plan: atHead[l.Name]}
		if !f.Judged || f.Plan == nil {
			out[l.Name] = f
			continue
		}
		e, err := d.Store.PolicyEvaluationOf(ctx, repo, pr, l.Name)
		if errors.Is(err, store.ErrNotFound) {
			out[l.Name] = f
			continue
		}
		if err != nil {
			return nil, err
		}
		if f.Sets, err = decodeSets(e); err != nil {
			return nil, err
		}
		f.Evaluation = e
		if f.Approvals, err = d.Store.PolicyApprovals(ctx, repo, pr, l.Name, e.HeadSHA, e.PlanAt); err != nil {
			return nil, err
		}
		out[l.Name] = f
	}
	return out, nil
}

// rewritePolicyCheck shows a layer's policy state after an approval.
func rewritePolicyCheck(ctx context.Context, d *worker.Deps, c *worker.CommandContext, l config.Layer, plans []*store.Plan) error {
	facts, err := readPolicyFacts(ctx, d, c.Job.FullName, c.Job.PR, c.PR.HeadSHA(), []config.Layer{l}, c.Config.Repo, plans)
	if err != nil {
		return err
	}
	f := facts[l.Name]
	if f.Evaluation == nil {
		return nil
	}
	check := policyCheck(l.Name, f.Plan.HeadSHA, c.Job.PR, f.Evaluation.PolicySHA, &policyReport{Sets: f.Sets}, policyGate(f), f.Approvals)
	_, err = c.Reporter.CreateCheck(ctx, check)
	return err
}
