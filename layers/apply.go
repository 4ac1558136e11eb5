package layers

import (
	"context"
	"fmt"
	"strings"

	"strata.dev/strata/checks"
	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
	"strata.dev/strata/worker"
)

// applyCommand answers /apply [LAYER...]: it reads the facts the decision
// needs (plans, locks, and the PR's facts the layers' apply requirements
// name), and enqueues one apply job for the layers in dependency order.
func applyCommand(ctx context.Context, d *worker.Deps, c *worker.CommandContext, cmd command.Command) error {
	a, head := c.Job, c.PR.HeadSHA()
	if !c.PR.Open() {
		return c.Reply(ctx, fmt.Sprintf("@%s this pull request is closed; nothing to apply.", a.User))
	}
	all, err := repoLayers(ctx, d, a.Repo, head, c.Config)
	if err != nil {
		return err
	}
	plans, err := d.Store.PlansOfPR(ctx, a.FullName, a.PR)
	if err != nil {
		return err
	}
	layers, why := applyTargets(all, cmd.(command.Apply).Layers, plans)
	if why != "" {
		return c.Reply(ctx, fmt.Sprintf("@%s %s", a.User, why))
	}
	f := applyFacts{PR: a.PR, Head: head, Layers: layers, All: all, Plans: plans}
	if err := applyFactsOfLocks(ctx, d.Store, a.FullName, layers, &f); err != nil {
		return err
	}
	if f.Requirements, err = readRequirements(ctx, c.PR, layers); err != nil {
		return err
	}
	if err := readCodeowners(ctx, c.PR, layers, fetchTree(ctx, d, a.Repo, head), &f.Requirements); err != nil {
		return err
	}
	if f.Policy, err = readPolicyFacts(ctx, d, a.FullName, a.PR, head, layers, c.Config.Repo, plans); err != nil {
		return err
	}
	dec := decideApply(f)
	switch {
	case dec.Reply != "":
		return c.Reply(ctx, fmt.Sprintf("@%s %s", a.User, dec.Reply))
	case len(dec.Refuse) > 0:
		return refuseApply(ctx, c, dec.Refuse, dec.Reason)
	}
	if why, err := takeApplyLocks(ctx, d, c.Reporter, a.Repo, a.PR, head, a.User, dec.Take); err != nil {
		return err
	} else if why != "" {
		return refuseApply(ctx, c, dec.Take, why)
	}

	job := jobs.LayerApply{Repo: a.Repo, PR: a.PR, Target: strings.Join(layerNames(dec.Run), ","), HeadSHA: head, User: a.User}
	for _, l := range dec.Run {
		id, err := c.Reporter.CreateCheck(ctx, report.Check{Name: checks.Apply(l.Name), HeadSHA: head, Status: "queued",
			ExternalID: checks.ExternalID(a.PR), Title: "Waiting to apply",
			Summary: fmt.Sprintf("Apply of %s requested by @%s, waiting for a worker.", markdown.Quote(l.Name), a.User)})
		if err != nil {
			return err
		}
		job.Steps = append(job.Steps, jobs.ApplyStep{Layer: specOf(l), CheckRunID: id})
	}
	_, err = d.Queue.Enqueue(ctx, job, nil)
	return err
}

// refuseApply fails the apply checks of the layers and says why.
func refuseApply(ctx context.Context, c *worker.CommandContext, layers []string, reason string) error {
	for _, l := range layers {
		if _, err := c.Reporter.CreateCheck(ctx, report.Check{Name: checks.Apply(l), HeadSHA: c.PR.HeadSHA(), Conclusion: "failure",
			ExternalID: checks.ExternalID(c.Job.PR), Title: "Apply refused", Summary: reason, Actions: applyActions}); err != nil {
			return err
		}
	}
	return c.Reply(ctx, fmt.Sprintf("@%s `/apply` refused: %s", c.Job.User, reason))
}

// applyRefused reports an /apply the permission table refused on the apply
// checks of the layers it names (or the PR's planned layers).
func applyRefused(ctx context.Context, d *worker.Deps, c *worker.CommandContext, cmd command.Command, reason string) error {
	var names []string
	if all, err := repoLayers(ctx, d, c.Job.Repo, c.PR.HeadSHA(), c.Config); err == nil {
		plans, err := d.Store.PlansOfPR(ctx, c.Job.FullName, c.Job.PR)
		if err != nil {
			return err
		}
		layers, _ := applyTargets(all, cmd.(command.Apply).Layers, plans)
		names = layerNames(layers)
	}
	return refuseApply(ctx, c, names, reason)
}

// readRequirements reads the PR's facts that the layers' apply
// requirements look at, and only those.
func readRequirements(ctx context.Context, pr pull.Context, layers []config.Layer) (requirementFacts, error) {
	f := requirementFacts{Author: pr.Author(), Head: pr.HeadSHA(), Conflicts: pr.Conflicts(), BaseRef: pr.BaseRef()}
	var err error
	if needs(layers, config.Approved) {
		if f.Reviews, err = pr.Reviews(ctx); err != nil {
			return f, err
		}
		f.Reviewers = map[string]pull.Permission{}
		for _, r := range approvals(f.Reviews) {
			if f.Reviewers[r.Author], err = pr.Permission(ctx, r.Author); err != nil {
				return f, err
			}
		}
	}
	if needs(layers, config.Mergeable) && !f.Conflicts {
		if f.Statuses, err = pr.Statuses(ctx); err != nil {
			return f, err
		}
	}
	if needs(layers, config.Undiverged) {
		if f.BehindBy, err = pr.BehindBy(ctx); err != nil {
			return f, err
		}
	}
	return f, nil
}
