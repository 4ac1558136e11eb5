package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
)

// staleMessage is the refusal of an apply whose plan is not of the head.
const staleMessage = "plan is stale, run /plan"

// applyCommand answers /apply [LAYER...]: it checks who asks, that each plan
// is of the current head, the layers' apply requirements and dependencies,
// then enqueues one apply job for the layers in dependency order.
func applyCommand(ctx context.Context, c *CommandContext, cmd command.Command) error {
	a, d := c.Job, c.Deps
	head := c.PR.GetHead().GetSHA()
	refuse := func(layers []string, reason string) error {
		for _, l := range layers {
			if _, err := c.Reporter.CreateCheck(ctx, report.Check{Name: applyCheckName(l), HeadSHA: head, Conclusion: "failure",
				ExternalID: externalID(a.PR), Title: "Apply refused", Summary: reason,
				Actions: []report.Action{{Label: "Re-plan", Description: "Plan this layer again", Identifier: "plan"}}}); err != nil {
				return err
			}
		}
		return c.Reply(ctx, fmt.Sprintf("@%s `/apply` refused: %s", a.User, reason))
	}
	if c.PR.GetState() != "open" {
		return c.Reply(ctx, fmt.Sprintf("@%s this pull request is closed; nothing to apply.", a.User))
	}

	all, err := repoLayers(ctx, d, c.GitHub, a.Repo, head, c.Config)
	if err != nil {
		return err
	}
	plans, err := d.Store.PlansOfPR(ctx, a.FullName, a.PR)
	if err != nil {
		return err
	}
	var layers []config.Layer
	if names := cmd.(command.Apply).Layers; len(names) > 0 {
		if layers, err = pickLayers(all, names); err != nil {
			return c.Reply(ctx, fmt.Sprintf("@%s %v", a.User, err))
		}
	} else {
		planned := map[string]bool{}
		for _, p := range plans {
			planned[p.Layer] = true
		}
		for _, l := range all {
			if planned[l.Name] {
				layers = append(layers, l)
			}
		}
		if len(layers) == 0 {
			return c.Reply(ctx, fmt.Sprintf("@%s this pull request has no plan to apply; comment `/plan` first.", a.User))
		}
	}
	names := layerNames(layers)

	if ok, perm, err := hasPermission(ctx, c.GitHub, a.Repo, a.User, d.Config.ApplyPermission); err != nil {
		return err
	} else if !ok {
		return refuse(names, fmt.Sprintf("@%s has %s permission on this repository; applying needs %s or higher.",
			a.User, perm, d.Config.ApplyPermission))
	}

	// Each plan must be of this head, unapplied, with this PR holding the lock.
	atHead := map[string]*store.Plan{}
	for _, p := range plans {
		if p.HeadSHA == head {
			atHead[p.Layer] = p
		}
	}
	var todo []config.Layer
	var done []string
	for _, l := range layers {
		p := atHead[l.Name]
		switch {
		case p == nil:
			return refuse([]string{l.Name}, fmt.Sprintf("`%s`: %s", l.Name, staleMessage))
		case !p.AppliedAt.IsZero():
			done = append(done, l.Name)
			continue
		}
		lock, err := d.Store.Lock(ctx, a.FullName, l.Name)
		if errors.Is(err, store.ErrNotFound) || (err == nil && lock.PR != a.PR) {
			return refuse([]string{l.Name}, fmt.Sprintf("`%s`: this pull request does not hold the layer's lock; %s", l.Name, staleMessage))
		}
		if err != nil {
			return err
		}
		todo = append(todo, l)
	}
	if len(todo) == 0 {
		return c.Reply(ctx, fmt.Sprintf("@%s %s already applied at %s.", a.User, orNone(done), short(head)))
	}

	for _, l := range todo {
		if why, err := unmetRequirements(ctx, c, l); err != nil {
			return err
		} else if why != "" {
			return refuse([]string{l.Name}, fmt.Sprintf("`%s`: %s", l.Name, why))
		}
	}
	if why := unmetDependencies(todo, all, atHead); why != "" {
		return refuse(layerNames(todo), why)
	}
	ordered, err := dependencyOrder(todo)
	if err != nil {
		return refuse(layerNames(todo), err.Error())
	}

	job := jobs.LayerApply{Repo: a.Repo, PR: a.PR, Target: strings.Join(layerNames(ordered), ","), HeadSHA: head, User: a.User}
	for _, l := range ordered {
		id, err := c.Reporter.CreateCheck(ctx, report.Check{Name: applyCheckName(l.Name), HeadSHA: head, Status: "queued",
			ExternalID: externalID(a.PR), Title: "Waiting to apply",
			Summary: fmt.Sprintf("Apply of `%s` requested by @%s, waiting for a worker.", l.Name, a.User)})
		if err != nil {
			return err
		}
		job.Steps = append(job.Steps, jobs.ApplyStep{Layer: specOf(l), CheckRunID: id})
	}
	_, err = d.Queue.Enqueue(ctx, job, nil)
	return err
}

// unmetDependencies refuses a layer whose depends_on layer has changes
// planned at this head that are not applied and not part of this apply.
func unmetDependencies(todo, all []config.Layer, atHead map[string]*store.Plan) string {
	inApply := map[string]bool{}
	for _, l := range todo {
		inApply[l.Name] = true
	}
	for _, l := range todo {
		for _, dep := range l.DependsOn {
			p := atHead[dep]
			if inApply[dep] || p == nil || !p.HasChanges || !p.AppliedAt.IsZero() {
				continue
			}
			return fmt.Sprintf("`%s` depends on `%s`, whose plan is not applied yet; apply `%s` first (or both together).", l.Name, dep, dep)
		}
	}
	return ""
}

// permissionRank orders repository roles.
var permissionRank = map[string]int{"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}

// hasPermission asks GitHub for the user's role on the repository (the
// collaborator permission API; role_name knows maintain and triage).
func hasPermission(ctx context.Context, gh *github.Client, repo jobs.Repo, user, least string) (bool, string, error) {
	req, err := gh.NewRequest("GET", fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", repo.Owner, repo.Name, user), nil)
	if err != nil {
		return false, "", err
	}
	var level struct {
		Permission string `json:"permission"`
		RoleName   string `json:"role_name"`
	}
	if _, err := gh.Do(ctx, req, &level); err != nil {
		var gerr *github.ErrorResponse
		if errors.As(err, &gerr) && gerr.Response != nil && gerr.Response.StatusCode == 404 {
			return false, "no", nil
		}
		return false, "", fmt.Errorf("permission of %s on %s: %w", user, repo.FullName, err)
	}
	role := level.Permission
	if _, ok := permissionRank[level.RoleName]; ok {
		role = level.RoleName
	}
	if least == "" {
		least = "write"
	}
	return permissionRank[role] >= permissionRank[least], role, nil
}

// unmetRequirements checks a layer's apply requirements (taken from the
// default branch) and says what is missing, or "".
func unmetRequirements(ctx context.Context, c *CommandContext, l config.Layer) (string, error) {
	a, pr := c.Job, c.PR
	for _, req := range l.ApplyRequirements {
		switch req {
		case config.Approved:
			ok, err := approved(ctx, c.GitHub, a.Repo, pr)
			if err != nil {
				return "", err
			}
			if !ok {
				return "it requires an approving review by someone other than the author", nil
			}
		case config.Mergeable:
			why, err := mergeable(ctx, c.GitHub, a.Repo, pr)
			if err != nil || why != "" {
				return why, err
			}
		case config.Undiverged:
			cmp, _, err := c.GitHub.Repositories.CompareCommits(ctx, a.Owner, a.Name,
				pr.GetBase().GetRef(), pr.GetHead().GetSHA(), &github.ListOptions{PerPage: 1})
			if err != nil {
				return "", fmt.Errorf("compare %s with %s: %w", pr.GetBase().GetRef(), short(pr.GetHead().GetSHA()), err)
			}
			if cmp.GetBehindBy() > 0 {
				return fmt.Sprintf("it requires the branch to contain the tip of %s, which is %d %s ahead; update the branch and plan again",
					pr.GetBase().GetRef(), cmp.GetBehindBy(), pluralize(cmp.GetBehindBy(), "commit", "commits")), nil
			}
		}
	}
	return "", nil
}

// approved: the newest review of someone other than the author approves.
func approved(ctx context.Context, gh *github.Client, repo jobs.Repo, pr *github.PullRequest) (bool, error) {
	latest := map[string]string{}
	opts := &github.ListOptions{PerPage: 100}
	for {
		reviews, resp, err := gh.PullRequests.ListReviews(ctx, repo.Owner, repo.Name, pr.GetNumber(), opts)
		if err != nil {
			return false, fmt.Errorf("reviews of %s#%d: %w", repo.FullName, pr.GetNumber(), err)
		}
		for _, r := range reviews {
			if st := r.GetState(); st == "APPROVED" || st == "CHANGES_REQUESTED" || st == "DISMISSED" {
				latest[r.GetUser().GetLogin()] = st
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	for user, st := range latest {
		if st == "APPROVED" && !strings.EqualFold(user, pr.GetUser().GetLogin()) {
			return true, nil
		}
	}
	return false, nil
}

// mergeable: no conflicts, and no failing check or status on the head other
// than Strata's own, so that `strata/applied` as a required check (pending
// until the apply) cannot keep the apply from happening.
func mergeable(ctx context.Context, gh *github.Client, repo jobs.Repo, pr *github.PullRequest) (string, error) {
	if pr.Mergeable != nil && !pr.GetMergeable() || pr.GetMergeableState() == "dirty" {
		return "it requires the pull request to merge without conflicts", nil
	}
	head := pr.GetHead().GetSHA()
	opts := &github.ListCheckRunsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		res, resp, err := gh.Checks.ListCheckRunsForRef(ctx, repo.Owner, repo.Name, head, opts)
		if err != nil {
			return "", fmt.Errorf("checks of %s@%s: %w", repo.FullName, short(head), err)
		}
		for _, cr := range res.CheckRuns {
			if strings.HasPrefix(cr.GetName(), "strata/") {
				continue
			}
			switch cr.GetConclusion() {
			case "failure", "timed_out", "cancelled", "action_required":
				return fmt.Sprintf("it requires passing checks, and `%s` is %s", cr.GetName(), cr.GetConclusion()), nil
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	status, _, err := gh.Repositories.GetCombinedStatus(ctx, repo.Owner, repo.Name, head, nil)
	if err != nil {
		return "", fmt.Errorf("statuses of %s@%s: %w", repo.FullName, short(head), err)
	}
	for _, s := range status.Statuses {
		if !strings.HasPrefix(s.GetContext(), "strata/") && (s.GetState() == "failure" || s.GetState() == "error") {
			return fmt.Sprintf("it requires passing checks, and `%s` is %s", s.GetContext(), s.GetState()), nil
		}
	}
	return "", nil
}
