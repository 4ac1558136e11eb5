package worker

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
)

const zeroSHA = "0000000000000000000000000000000000000000"

// syncsOnPush hydrates each sync whose inputs the push changed (every sync
// not hydrated yet), and marks the syncs a PR has taken over as paused.
func syncsOnPush(ctx context.Context, d *Deps, ev jobs.Push) error {
	rep, err := d.Reporter(ev.Repo)
	if err != nil {
		return err
	}
	gh := rep.REST
	cfg, err := LoadRepoConfig(ctx, gh, ev.Owner, ev.Name, ev.After, ev.DefaultBranch)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		return reportConfigErrors(ctx, rep, ev, bad)
	}
	if err != nil {
		return err
	}
	if len(cfg.Syncs) == 0 {
		return nil
	}
	changed, known, err := pushChanges(ctx, gh, ev)
	if err != nil {
		return err
	}
	for _, s := range cfg.Syncs {
		spec := syncSpec(ev.Repo, s)
		if why := feedsItself(ev, spec); why != "" {
			if err := failOnce(ctx, rep, ev.After, s.Name, "Destination overlaps the source", why); err != nil {
				return err
			}
			continue
		}
		if t, err := d.Store.Takeover(ctx, ev.FullName, s.Name); err == nil {
			if err := showPaused(ctx, d, rep, t, ev.After); err != nil {
				return err
			}
			continue
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		last, err := d.Store.SyncHydration(ctx, ev.FullName, s.Name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if last != nil && known && last.FailedCommit == "" && last.Spec == specJSON(spec) && !hydrate.InputsChanged(last.Inputs, changed) {
			continue
		}
		if _, err := d.Queue.Enqueue(ctx, jobs.SyncHydrate{Repo: ev.Repo, Target: s.Name, HeadSHA: ev.After, Sync: spec,
			Reason: jobs.HydratePush}, nil); err != nil {
			return err
		}
	}
	return nil
}

// pushChanges lists the files a push changed: from the payload, else from
// the compare API. known is false when they cannot be told (a new branch, a
// force push), and every sync is hydrated.
func pushChanges(ctx context.Context, gh *github.Client, ev jobs.Push) (files []string, known bool, err error) {
	if len(ev.Changed) > 0 {
		return ev.Changed, true, nil
	}
	if ev.Before == "" || ev.Before == zeroSHA {
		return nil, false, nil
	}
	opts := &github.ListOptions{PerPage: 100}
	for {
		cmp, resp, err := gh.Repositories.CompareCommits(ctx, ev.Owner, ev.Name, ev.Before, ev.After, opts)
		if resp != nil && resp.StatusCode == 404 {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("compare %s...%s in %s: %w", short(ev.Before), short(ev.After), ev.FullName, err)
		}
		if cmp.GetStatus() != "ahead" {
			return nil, false, nil // a force push: what it replaced is not listed
		}
		for _, f := range cmp.Files {
			files = append(files, f.GetFilename())
			if prev := f.GetPreviousFilename(); prev != "" {
				files = append(files, prev)
			}
		}
		if resp.NextPage == 0 {
			return files, true, nil
		}
		opts.Page = resp.NextPage
	}
}

// feedsItself refuses a sync that writes into its own source on the default
// branch: each hydration would be a push that changes its inputs.
func feedsItself(ev jobs.Push, spec jobs.SyncSpec) string {
	if spec.DestRepo != ev.FullName || spec.DestBranch != ev.DefaultBranch {
		return ""
	}
	dest := strings.Trim(path.Clean("/"+spec.DestPath), "/")
	src := strings.Trim(path.Clean("/"+spec.Source), "/")
	if dest == "" || src == "" || dest == src || strings.HasPrefix(src, dest+"/") || strings.HasPrefix(dest, src+"/") {
		return fmt.Sprintf("Nothing was hydrated: `%s` writes to `%s` on `%s`, which overlaps its source `%s`; "+
			"each hydration would change its own inputs. Choose another dest branch or path.", spec.Name, spec.DestPath, spec.DestBranch, spec.Source)
	}
	return ""
}

// failOnce puts a failed hydrate check on a pushed commit, once.
func failOnce(ctx context.Context, rep *report.Reporter, sha, sync, title, summary string) error {
	name := hydrateCheckName(sync)
	if cur, err := rep.FindCheck(ctx, sha, name); err != nil || cur != nil {
		return err
	}
	_, err := rep.CreateCheck(ctx, report.Check{Name: name, HeadSHA: sha, Conclusion: "failure", Title: title, Summary: summary})
	return err
}

// showPaused puts the paused check on a pushed commit, once.
func showPaused(ctx context.Context, d *Deps, rep *report.Reporter, t *store.Takeover, sha string) error {
	name := hydrateCheckName(t.Sync)
	if cur, err := rep.FindCheck(ctx, sha, name); err != nil || cur != nil {
		return err
	}
	_, err := rep.CreateCheck(ctx, report.Check{Name: name, HeadSHA: sha, Conclusion: "neutral",
		Title: pausedTitle(t), Summary: pausedSummary(d, t), DetailsURL: prURL(d, t.Repo, t.PR)})
	return err
}

// reportConfigErrors fails the hydrate check of every sync the pushed
// .strata.yaml names when the file is invalid: nothing is hydrated.
func reportConfigErrors(ctx context.Context, rep *report.Reporter, ev jobs.Push, bad config.RepoErrors) error {
	raw, err := readRepoConfig(ctx, rep.REST, ev.Owner, ev.Name, ev.After)
	if err != nil || raw == nil {
		return nil // unparseable: no sync to report on; the PR that changed it showed why
	}
	var lines []string
	for _, e := range bad {
		lines = append(lines, "- `"+e.Error()+"`")
	}
	for _, s := range raw.Syncs {
		if err := failOnce(ctx, rep, ev.After, s.Name, "Invalid "+config.RepoFile,
			fmt.Sprintf("Nothing was hydrated: `%s` at %s is invalid.\n\n%s", config.RepoFile, short(ev.After), strings.Join(lines, "\n"))); err != nil {
			return err
		}
	}
	return nil
}

// syncsOnPullRequest: takeovers follow the PR (a new head is hydrated, a
// closed PR gives the destination back); a PR that changes a sync's inputs
// gets a preview of the hydrated diff.
func syncsOnPullRequest(ctx context.Context, d *Deps, ev jobs.PullRequest) error {
	rep, err := d.Reporter(ev.Repo)
	if err != nil {
		return err
	}
	switch ev.Action {
	case "closed":
		return endTakeoversOfPR(ctx, d, rep, ev.Repo, ev.PR, ev.DefaultBranch, closedWhy(ev.Merged))
	case "synchronize":
		if err := followHead(ctx, d, rep, ev); err != nil {
			return err
		}
	case "opened", "reopened":
	default:
		return nil
	}
	return startPreviews(ctx, d, rep, ev)
}

// startPreviews enqueues a preview of each sync whose inputs the PR changes.
func startPreviews(ctx context.Context, d *Deps, rep *report.Reporter, ev jobs.PullRequest) error {
	gh := rep.REST
	cfg, err := LoadRepoConfig(ctx, gh, ev.Owner, ev.Name, ev.HeadSHA, ev.DefaultBranch)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		return nil // the command path reports config errors
	}
	if err != nil || len(cfg.Syncs) == 0 {
		return err
	}
	files, err := changedFiles(ctx, gh, ev.Repo, ev.PR)
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
		name := hydrateCheckName(s.Name)
		if cur, err := rep.FindCheck(ctx, ev.HeadSHA, name); err != nil || cur != nil {
			if err != nil {
				return err
			}
			continue // a retried event: the preview is under way
		}
		id, err := rep.CreateCheck(ctx, report.Check{Name: name, HeadSHA: ev.HeadSHA, Status: "queued", ExternalID: externalID(ev.PR),
			Title: "Waiting to preview", Summary: fmt.Sprintf("Preview of `%s`: hydrating the base and the head, then comparing.", s.Name)})
		if err != nil {
			return err
		}
		if _, err := d.Queue.Enqueue(ctx, jobs.SyncPreview{Repo: ev.Repo, PR: ev.PR, Target: s.Name, HeadSHA: ev.HeadSHA,
			BaseSHA: ev.BaseSHA, Sync: syncSpec(ev.Repo, s), CheckRunID: id}, nil); err != nil {
			return err
		}
	}
	return nil
}

// previewTouched tells whether a PR's files can change a sync's output: one
// is an input of its last hydration, lies under its source, or is the config.
func previewTouched(s config.Sync, last *store.SyncHydration, files []string) bool {
	if last != nil && len(last.Inputs) > 0 && hydrate.InputsChanged(last.Inputs, files) {
		return true
	}
	src := strings.Trim(path.Clean("/"+s.Source), "/")
	for _, f := range files {
		if f == config.RepoFile || src == "" || strings.HasPrefix(f, src+"/") {
			return true
		}
	}
	return false
}
