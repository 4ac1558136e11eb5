package layers

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"strata.dev/strata/access"
	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/worker"
)

// forkMarker tags the comment that explains why a fork's PR is not planned.
const forkMarker = "<!-- strata:fork -->"

// layersOnPullRequest: autoplan on opened, reopened and synchronize (a new
// head also cancels plans of the old one and makes its plans stale, and
// moves the lock checks); locks released and plans deleted on close.
func layersOnPullRequest(ctx context.Context, d *worker.Deps, ev jobs.PullRequest) error {
	rep, err := d.Reporter(ev.Repo)
	if err != nil {
		return err
	}
	switch ev.Action {
	case "closed":
		// A merge keeps the locks of the layers it applies (merge.go).
		keep, err := mergeOnClose(ctx, d, rep, ev)
		if err != nil {
			return err
		}
		return releasePR(ctx, d, rep, ev.Repo, ev.PR, worker.ClosedWhy(ev.Merged), keep)
	case "opened", "reopened", "synchronize":
	default:
		return nil
	}
	if _, err := d.Store.SetPRHead(ctx, ev.FullName, ev.PR, ev.HeadSHA); err != nil {
		return err
	}
	if err := moveLocks(ctx, d, rep, ev); err != nil {
		return err
	}
	if !access.RunsOnItsOwn(ev.Fork) {
		return explainFork(ctx, d, rep, ev)
	}
	return autoplan(ctx, d, rep, ev)
}

// moveLocks puts the PR's lock checks on its new head.
func moveLocks(ctx context.Context, d *worker.Deps, rep *report.Reporter, ev jobs.PullRequest) error {
	held, err := d.Store.LocksOfPR(ctx, ev.FullName, ev.PR)
	if err != nil {
		return err
	}
	for _, l := range held {
		if err := showLock(ctx, d, rep, l, ev.HeadSHA); err != nil {
			return err
		}
	}
	return nil
}

// explainFork comments once that a fork's PR is not planned on its own.
func explainFork(ctx context.Context, d *worker.Deps, rep *report.Reporter, ev jobs.PullRequest) error {
	if ev.Action == "synchronize" {
		return nil
	}
	pr, err := d.PR(ctx, ev.Repo, ev.PR)
	if err != nil {
		return err
	}
	comments, err := pr.Comments(ctx)
	if err != nil {
		return err
	}
	for _, c := range comments {
		if strings.Contains(c.Body, forkMarker) {
			return nil
		}
	}
	_, err = rep.Comment(ctx, ev.PR, forkMarker+"\nThis pull request comes from a fork, so Strata does not plan it on its own: "+
		"Terraform would run code from the fork with this repository's credentials. A maintainer who has reviewed the change "+
		"can comment `/plan` to plan it.")
	return err
}

// autoplan plans the layers with autoplan enabled whose when_modified globs
// match the PR's changed files, or whose local modules they change.
func autoplan(ctx context.Context, d *worker.Deps, rep *report.Reporter, ev jobs.PullRequest) error {
	pr, err := d.PR(ctx, ev.Repo, ev.PR)
	if err != nil {
		return err
	}
	cfg, err := d.LoadRepoConfig(ctx, pr, ev.HeadSHA, ev.DefaultBranch)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		return nil // the command path reports config errors; autoplan stays quiet
	}
	if err != nil {
		return err
	}
	all, err := repoLayers(ctx, d, ev.Repo, ev.HeadSHA, cfg)
	if err != nil {
		return err
	}
	files, err := pr.ChangedFiles(ctx)
	if err != nil {
		return err
	}
	modules, err := readLayerModules(ctx, d, ev.Repo, ev.HeadSHA, all, files, true)
	if err != nil {
		return err
	}
	layers := touchedLayers(all, files, modules, true)
	if len(layers) == 0 {
		return nil
	}
	user := ev.Author
	if ev.Sender != "" {
		user = ev.Sender
	}
	if err := startPlans(ctx, d, rep, ev.Repo, prRef{Number: ev.PR, HeadSHA: ev.HeadSHA, URL: d.PRURL(ev.FullName, ev.PR)}, user, layers); err != nil {
		return fmt.Errorf("autoplan %s#%d: %w", ev.FullName, ev.PR, err)
	}
	return nil
}
