package syncs

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"strata.dev/strata/access"
	"strata.dev/strata/checks"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

const zeroSHA = "0000000000000000000000000000000000000000"

// syncsOnPush hydrates each sync whose inputs the push changed (every sync
// not hydrated yet), and marks the syncs a PR has taken over as paused.
func syncsOnPush(ctx context.Context, d *worker.Deps, ev jobs.Push) error {
	rep, err := d.Reporter(ev.Repo)
	if err != nil {
		return err
	}
	repo, err := d.Repo(ev.Repo)
	if err != nil {
		return err
	}
	cfg, err := d.LoadRepoConfig(ctx, repo, ev.After, ev.DefaultBranch)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		return reportConfigErrors(ctx, repo, rep, ev, bad)
	}
	if err != nil {
		return err
	}
	if err := d.Store.RecordSyncDiscovery(ctx, syncDiscovery(ev, cfg)); err != nil {
		return err
	}
	if err := reportSyncFilesOnPush(ctx, rep, ev, cfg.SyncFileProblems); err != nil {
		return err
	}
	if len(cfg.Syncs) == 0 {
		return nil
	}
	changed, known, err := pushChanges(ctx, repo, ev)
	if err != nil {
		return err
	}
	for _, s := range cfg.Syncs {
		spec := syncSpec(ev.Repo, s)
		p, err := syncPushFacts(ctx, d, ev, spec, changed, known)
		if err != nil {
			return err
		}
		switch pushStepOf(spec, p) {
		case pushOverlaps:
			err = failOnce(ctx, rep, ev.After, s.Name, "Destination overlaps the source", p.Overlap)
		case pushPaused:
			err = showPaused(ctx, d, rep, p.Takeover, ev.After)
		case pushUpToDate:
			// No hydration, no commit, but the record says this commit's
			// output is in the destination.
			err = d.Store.MoveSourceCommit(ctx, ev.FullName, s.Name, ev.After)
		case pushHydrate:
			_, err = d.Queue.Enqueue(ctx, jobs.SyncHydrate{Repo: ev.Repo, Target: s.Name, HeadSHA: ev.After, Sync: spec,
				Reason: jobs.HydratePush}, nil)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// syncPushFacts looks up what a push's step for one sync depends on, up to
// the first fact that decides it: an overlapping destination is not looked
// up further, nor a sync taken over.
func syncPushFacts(ctx context.Context, d *worker.Deps, ev jobs.Push, spec jobs.SyncSpec, changed []string, known bool) (syncPush, error) {
	p := syncPush{Overlap: feedsItself(ev, spec), Changed: changed, Known: known}
	if p.Overlap != "" {
		return p, nil
	}
	t, err := d.Store.Takeover(ctx, ev.FullName, spec.Name)
	if err == nil {
		p.Takeover = t
		return p, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return p, err
	}
	p.Last, err = d.Store.SyncHydration(ctx, ev.FullName, spec.Name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return p, err
	}
	return p, nil
}

// failOnce puts a failed hydrate check on a pushed commit, once.
func failOnce(ctx context.Context, rep *report.Reporter, sha, sync, title, summary string) error {
	name := checks.Hydrate(sync)
	if cur, err := rep.FindCheck(ctx, sha, name); err != nil || cur != nil {
		return err
	}
	_, err := rep.CreateCheck(ctx, report.Check{Name: name, HeadSHA: sha, Conclusion: "failure", Title: title, Summary: summary})
	return err
}

// showPaused puts the paused check on a pushed commit, once.
func showPaused(ctx context.Context, d *worker.Deps, rep *report.Reporter, t *store.Takeover, sha string) error {
	name := checks.Hydrate(t.Sync)
	if cur, err := rep.FindCheck(ctx, sha, name); err != nil || cur != nil {
		return err
	}
	_, err := rep.CreateCheck(ctx, report.Check{Name: name, HeadSHA: sha, Conclusion: "neutral",
		Title: pausedTitle(t), Summary: pausedSummary(t, d.PRURL(t.Repo, t.PR)), DetailsURL: d.PRURL(t.Repo, t.PR)})
	return err
}

// reportConfigErrors fails the hydrate check of every sync the pushed
// .strata.yaml names when the file is invalid: nothing is hydrated.
func reportConfigErrors(ctx context.Context, repo pull.Repository, rep *report.Reporter, ev jobs.Push, bad config.RepoErrors) error {
	raw, err := worker.ReadRepoConfig(ctx, repo, ev.After)
	if err != nil || raw == nil {
		return nil // unparseable: no sync to report on; the PR that changed it showed why
	}
	var lines []string
	for _, e := range bad {
		lines = append(lines, "- "+markdown.Quote(e.Error()))
	}
	for _, s := range raw.Syncs {
		if err := failOnce(ctx, rep, ev.After, s.Name, "Invalid "+config.RepoFile,
			fmt.Sprintf("Nothing was hydrated: %s at %s is invalid.\n\n%s", markdown.Quote(config.RepoFile), report.Short(ev.After), strings.Join(lines, "\n"))); err != nil {
			return err
		}
	}
	return nil
}

// syncsOnPullRequest: takeovers follow the PR (a new head is hydrated, a
// closed PR gives the destination back); a PR that changes a sync's inputs
// gets a preview of the hydrated diff.
func syncsOnPullRequest(ctx context.Context, d *worker.Deps, ev jobs.PullRequest) error {
	rep, err := d.Reporter(ev.Repo)
	if err != nil {
		return err
	}
	switch ev.Action {
	case "closed":
		in := repoScope{repo: ev.Repo, rep: rep, defaultBranch: ev.DefaultBranch}
		return endTakeoversOfPR(ctx, d, in, ev.PR, worker.ClosedWhy(ev.Merged))
	case "synchronize":
		if err := followHead(ctx, d, rep, ev); err != nil {
			return err
		}
	case "opened", "reopened":
	default:
		return nil
	}
	if !access.RunsOnItsOwn(ev.Fork) {
		return nil // nothing of a fork is built on its own: its code is not read yet
	}
	return startPreviews(ctx, d, rep, ev)
}

// startPreviews enqueues a preview of each sync whose inputs the PR changes.
func startPreviews(ctx context.Context, d *worker.Deps, rep *report.Reporter, ev jobs.PullRequest) error {
	pr, err := d.PR(ctx, ev.Repo, ev.PR)
	if err != nil {
		return err
	}
	cfg, err := d.LoadRepoConfig(ctx, pr, ev.HeadSHA, ev.DefaultBranch)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		return nil // the command path reports config errors
	}
	if err == nil && len(cfg.SyncFileProblems) > 0 {
		if err := reportSyncFilesOnPR(ctx, rep, pr, ev, cfg.SyncFileProblems); err != nil {
			return err
		}
	}
	if err != nil || len(cfg.Syncs) == 0 {
		return err
	}
	files, err := pr.ChangedFiles(ctx)
	if err != nil {
		return err
	}
	for _, s := range cfg.Syncs {
		last, err := d.Store.SyncHydration(ctx, ev.FullName, s.Name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if !previewTouched(s, last, files) {
			continue
		}
		name := checks.Hydrate(s.Name)
		if cur, err := rep.FindCheck(ctx, ev.HeadSHA, name); err != nil || cur != nil {
			if err != nil {
				return err
			}
			continue // a retried event: the preview is under way
		}
		id, err := rep.CreateCheck(ctx, report.Check{Name: name, HeadSHA: ev.HeadSHA, Status: "queued", ExternalID: checks.ExternalID(ev.PR),
			Title: "Waiting to preview", Summary: fmt.Sprintf("Preview of %s: hydrating the base and the head, then comparing.", markdown.Quote(s.Name))})
		if err != nil {
			return err
		}
		if _, err := d.Queue.Enqueue(ctx, jobs.SyncPreview{Repo: ev.Repo, PR: ev.PR, Target: s.Name, HeadSHA: ev.HeadSHA,
			BaseSHA: previewBase(s, ev.BaseSHA), Sync: syncSpec(ev.Repo, s), CheckRunID: id}, nil); err != nil {
			return err
		}
	}
	return nil
}
