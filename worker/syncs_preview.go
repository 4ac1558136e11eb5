package worker

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
)

// syncPreviewWorker shows on a PR's head what merging it would change in a
// sync's destination: the unified diff between hydrating the base and the
// head. Both are annotated with the head's SHA, so that only what the PR
// changes shows. Nothing is committed.
type syncPreviewWorker struct {
	river.WorkerDefaults[jobs.SyncPreview]
	d *Deps
}

func (w *syncPreviewWorker) Timeout(*river.Job[jobs.SyncPreview]) time.Duration {
	return jobs.SyncHydrateTimeout
}

func (w *syncPreviewWorker) Work(ctx context.Context, job *river.Job[jobs.SyncPreview]) error {
	a, d := job.Args, w.d
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	gh := rep.REST
	check := report.Check{Name: hydrateCheckName(a.Target), HeadSHA: a.HeadSHA, Status: "in_progress", ExternalID: externalID(a.PR),
		Title: "Previewing", Summary: fmt.Sprintf("Hydrating `%s` at the base and at %s.", a.Target, short(a.HeadSHA))}
	if err := rep.UpdateCheck(ctx, a.CheckRunID, check); err != nil {
		return err
	}
	finish := func(conclusion, title, summary, text string) error {
		check.Status, check.Conclusion, check.Title, check.Summary, check.Text = "", conclusion, title, summary, text
		return rep.UpdateCheck(ctx, a.CheckRunID, check)
	}

	head, err := buildSync(ctx, d, gh, a.Repo, a.Sync, a.HeadSHA, a.HeadSHA)
	var bad *hydrate.Error
	if errors.As(err, &bad) {
		return finish("failure", "kustomize build failed", buildFailure(a.Target, a.HeadSHA, bad), "")
	}
	if err != nil {
		return err
	}
	base := baseOf(ctx, rep, a)
	var old map[string][]byte
	baseNote := ""
	if base != "" {
		res, err := buildSync(ctx, d, gh, a.Repo, a.Sync, base, a.HeadSHA)
		switch {
		case errors.As(err, &bad):
			baseNote = fmt.Sprintf("The base (%s) does not build, so every file shows as added.\n\n", short(base))
		case err != nil:
			return err
		default:
			old = res.Files
		}
	}
	diff := hydrate.Diff(old, head.Files)
	if diff == "" {
		return finish("success", "No changes", fmt.Sprintf("%sHydrating `%s` at %s gives the same %d resources as the base %s.",
			baseNote, a.Target, short(a.HeadSHA), head.Resources, short(base)), "")
	}
	files := changedNames(old, head.Files)
	dest := destOf(a.Sync)
	summary := fmt.Sprintf("%sMerging this pull request would change **%d files** under `%s` of `%s` (%d resources, base %s). "+
		"Nothing was committed.", baseNote, files, dest.Path, dest.Branch, head.Resources, short(base))
	// Cut here, not in the reporter, so that the fence stays closed.
	text := "```diff\n" + report.CutBytes(diff, report.MaxCheckOutput-64, "\n… diff cut at GitHub's size limit\n") + "```\n"
	return finish("success", fmt.Sprintf("%d files would change", files), summary, text)
}

// baseOf is the commit the PR's changes start from (the merge base), or the
// base branch's head as the event gave it.
func baseOf(ctx context.Context, rep *report.Reporter, a jobs.SyncPreview) string {
	if a.BaseSHA == "" {
		return ""
	}
	cmp, _, err := rep.REST.Repositories.CompareCommits(ctx, a.Owner, a.Name, a.BaseSHA, a.HeadSHA, nil)
	if err == nil && cmp.GetMergeBaseCommit().GetSHA() != "" {
		return cmp.GetMergeBaseCommit().GetSHA()
	}
	return a.BaseSHA
}

func changedNames(old, new map[string][]byte) int {
	n := 0
	for name, c := range new {
		if o, ok := old[name]; !ok || string(o) != string(c) {
			n++
		}
	}
	for name := range old {
		if _, ok := new[name]; !ok {
			n++
		}
	}
	return n
}
