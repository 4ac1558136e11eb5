package syncs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/words"
	"strata.dev/strata/worker"
)

// syncPreviewWorker shows on a PR's head what merging it would change in a
// sync's destination: the unified diff between hydrating the base and the
// head. Both are annotated with the head's SHA, so that only what the PR
// changes shows. Nothing is committed.
type syncPreviewWorker struct {
	river.WorkerDefaults[jobs.SyncPreview]
	d *worker.Deps
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
	check := report.Check{Name: checks.Hydrate(a.Target), HeadSHA: a.HeadSHA, Status: "in_progress", ExternalID: checks.ExternalID(a.PR),
		Title: "Previewing", Summary: fmt.Sprintf("Hydrating %s at the base and at %s.", markdown.Quote(a.Target), report.Short(a.HeadSHA))}
	if err := rep.UpdateCheck(ctx, a.CheckRunID, check); err != nil {
		return err
	}
	finish := func(conclusion, title, summary, text string) error {
		check.Status, check.Conclusion, check.Title, check.Summary, check.Text = "", conclusion, title, summary, text
		return rep.UpdateCheck(ctx, a.CheckRunID, check)
	}

	head, err := buildSync(ctx, d, a.Repo, a.Sync, a.HeadSHA, a.HeadSHA)
	var bad *hydrate.Error
	if errors.As(err, &bad) {
		return finish("failure", "kustomize build failed", buildFailure(a.Target, a.HeadSHA, bad), "")
	}
	if err != nil {
		return err
	}
	valid, err := validateOutput(d, a.Sync, head)
	if err != nil {
		return err
	}
	finish = valid.previewing(finish)
	base := baseOf(ctx, d, a)
	var old map[string][]byte
	baseNote := ""
	if base != "" {
		res, err := buildSync(ctx, d, a.Repo, a.Sync, base, a.HeadSHA)
		switch {
		case errors.As(err, &bad):
			baseNote = fmt.Sprintf("The base (%s) does not build, so every file shows as added.\n\n", report.Short(base))
		case err != nil:
			return err
		default:
			old = res.Files
		}
	}
	diff := hydrate.Diff(old, head.Files)
	if diff == "" {
		return finish("success", "No changes", fmt.Sprintf("%sHydrating %s at %s gives the same %s as the base %s.",
			baseNote, markdown.Quote(a.Target), report.Short(a.HeadSHA), words.Count(head.Resources, "resource", "resources"), report.Short(base)), "")
	}
	files := changedNames(old, head.Files)
	dest := destOf(a.Sync)
	from := "base " + report.Short(base)
	if base == "" {
		from = "a sync the default branch does not have yet: every file is new"
	}
	summary := fmt.Sprintf("%sMerging this pull request would change **%s** under %s of %s (%s, %s). "+
		"Nothing was committed.", baseNote, words.Count(files, "file", "files"), markdown.Quote(dest.Path), markdown.Quote(dest.Branch), words.Count(head.Resources, "resource", "resources"), from)
	return finish("success", words.Count(files, "file", "files")+" would change", summary, diffText(diff))
}

// diffText is the diff as a code block that fits in a check's text: cut
// here, inside the fence, with a note, so that the fence stays closed. The
// fence is longer than any run of backticks in the diff, which a manifest
// may hold.
func diffText(diff string) string {
	fence := markdown.Fence(diff)
	const info, note = "diff", "\n… diff cut at GitHub's size limit\n"
	if budget := markdown.MaxBytes - len(fence+info+"\n") - len("\n"+fence+"\n"); len(diff) > budget {
		diff = markdown.Head(diff, budget-len(note)) + note
	}
	return markdown.Block(info, diff)
}

// baseOf is the commit the PR's changes start from (the merge base), or the
// base branch's head as the event gave it.
func baseOf(ctx context.Context, d *worker.Deps, a jobs.SyncPreview) string {
	if a.BaseSHA == "" {
		return ""
	}
	repo, err := d.Repo(a.Repo)
	if err != nil {
		return a.BaseSHA
	}
	if cmp, err := repo.Compare(ctx, a.BaseSHA, a.HeadSHA); err == nil && cmp.MergeBase != "" {
		return cmp.MergeBase
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
