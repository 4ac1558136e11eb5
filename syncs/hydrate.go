package syncs

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/gitcommit"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/words"
	"strata.dev/strata/worker"
)

// syncHydrateWorker hydrates a sync from a commit of the default branch into
// its destination and reports on that commit's `strata/hydrate: SYNC` check.
type syncHydrateWorker struct {
	river.WorkerDefaults[jobs.SyncHydrate]
	d *worker.Deps
}

func (w *syncHydrateWorker) Timeout(*river.Job[jobs.SyncHydrate]) time.Duration {
	return jobs.SyncHydrateTimeout
}

// Work is the job in three steps: hydrateSync does the hydration up to the
// first fact that ends it, hydrateOutcomeOf decides what that means for
// the check and the PR, and finishHydration acts on it once.
func (w *syncHydrateWorker) Work(ctx context.Context, job *river.Job[jobs.SyncHydrate]) error {
	a, d := job.Args, w.d
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	gh, err := d.Client(a.Repo)
	if err != nil {
		return err
	}
	check := report.Check{Name: checks.Hydrate(a.Target), HeadSHA: a.HeadSHA, Status: "in_progress",
		Title: "Hydrating", Summary: fmt.Sprintf("Hydrating %s from %s at %s.", markdown.Quote(a.Target), markdown.Quote(a.Sync.Source), report.Short(a.HeadSHA))}
	if a.PR != 0 {
		check.ExternalID = checks.ExternalID(a.PR)
	}
	checkID, err := ensureCheck(ctx, rep, job.Attempt > 1, check)
	if err != nil {
		return err
	}
	// kustomize runs in-process and prints nothing: the run's log says what
	// the check says, for the web UI's run page.
	d.AppendLog(ctx, fmt.Sprintf("[strata] kustomize build %s at %s\n", a.Sync.Source, a.HeadSHA), nil)
	h, err := hydrateSync(ctx, d, gh, a)
	h.Err, h.LastAttempt = err, job.Attempt >= job.MaxAttempts
	return finishHydration(ctx, d, rep, a, check, checkID, hydrateOutcomeOf(a, h))
}

// hydrateSync builds the sync, validates its output, commits it, records
// it and opens its promotion, and says what it found up to the first fact
// that ends the hydration, with the error that stopped it.
func hydrateSync(ctx context.Context, d *worker.Deps, gh *github.Client, a jobs.SyncHydrate) (hydration, error) {
	if t, err := d.Store.Takeover(ctx, a.FullName, a.Target); err == nil {
		return hydration{Takeover: t, TakeoverURL: d.PRURL(t.Repo, t.PR)}, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return hydration{}, err
	}
	res, err := buildSync(ctx, d, a.Repo, a.Sync, a.HeadSHA, a.HeadSHA)
	var bad *hydrate.Error
	if errors.As(err, &bad) {
		return hydration{Build: bad}, nil
	}
	if err != nil {
		return hydration{}, err
	}
	valid, err := validateOutput(d, a.Sync, res)
	if err != nil {
		return hydration{}, err
	}
	h := hydration{Valid: &valid}
	if valid.Block {
		return h, nil
	}
	dest, msg, err := hydrationTarget(ctx, d, gh, a)
	if errors.Is(err, gitcommit.ErrNoBranch) {
		h.NoBranch = true
		return h, nil
	}
	if err != nil {
		return h, err
	}
	repo := pull.NewRepo(gh, a.Owner, a.Name)
	same := func(_ context.Context, cur *hydrate.SyncState, held map[string][]byte) (string, error) {
		return sameOutput(cur, held, dest.Path, a.FullName, a.HeadSHA, res.FilesAt)
	}
	out, err := (gitcommit.Writer{GitHub: gh, Same: same}).Commit(ctx, dest, res.Files, msg, defaultBranchGuard(d, repo, a.Target, a.HeadSHA))
	if err != nil {
		return h, err
	}
	if out.Skipped != "" {
		h.Skipped = out.Skipped
		return h, nil
	}
	h.Title, h.Summary, err = recordHydration(ctx, d, gh, repo, a, res, out)
	return h, err
}

// recordHydration records what a hydration committed (or found the
// destination holding), opens or updates its promotion, and returns the
// title and summary of its check.
func recordHydration(ctx context.Context, d *worker.Deps, gh *github.Client, repo pull.Repository, a jobs.SyncHydrate, res *hydrate.Result, out *gitcommit.Result) (string, string, error) {
	newer := ""
	if out.Commit == "" {
		var err error
		if newer, err = recordedNewer(ctx, d, repo, a); err != nil {
			return "", "", err
		}
	}
	if newer == "" {
		destCommit, err := keptDestCommit(ctx, d, a, out.Commit)
		if err != nil {
			return "", "", err
		}
		if err := d.Store.RecordHydration(ctx, store.SyncHydration{
			Repo: a.FullName, Sync: a.Target, InstallationID: a.InstallationID, Spec: specJSON(a.Sync),
			Inputs: res.Inputs, SourceCommit: a.HeadSHA, Pinned: storePinned(res.Pinned), DestCommit: destCommit,
		}); err != nil {
			return "", "", err
		}
	}
	title, summary := hydrateReport(d, a.Target, a.Sync, a.HeadSHA, res, out)
	switch {
	case newer != "":
		summary += fmt.Sprintf("\nThe record of the latest source commit hydrated stays at %s, a later commit whose output this is too.\n", report.Short(newer))
	case out.Commit == "":
		summary += fmt.Sprintf("\nThe record of the latest source commit hydrated is now %s.\n", report.Short(a.HeadSHA))
	}
	if a.Sync.HydrateTo != "" {
		p, err := promote(ctx, d, gh, a)
		if err != nil {
			return "", "", err
		}
		summary = promotionNote(d, a.Sync, p) + summary
	}
	return title, summary, nil
}

// finishHydration acts once on a hydration's outcome: it records a failed
// source commit, completes the check, tells the PR whose takeover ended,
// and returns the error that retries or fails the job.
func finishHydration(ctx context.Context, d *worker.Deps, rep *report.Reporter, a jobs.SyncHydrate, check report.Check, checkID int64, out hydrateOutcome) error {
	if out.RecordFailed {
		if err := d.Store.RecordFailedBuild(ctx, a.FullName, a.Target, a.HeadSHA); err != nil {
			return err
		}
	}
	if out.Conclusion != "" {
		check.Status, check.Conclusion, check.Title, check.Summary = "", out.Conclusion, out.Title, out.Summary
		d.AppendLog(ctx, fmt.Sprintf("[strata] %s: %s\n\n%s\n", out.Conclusion, out.Title, out.Summary), nil)
		err := rep.UpdateCheck(ctx, checkID, check)
		if out.Err != nil {
			worker.Warn(ctx, err, "report the failed hydration")
			return out.Err
		}
		if err != nil {
			return err
		}
	}
	if out.Tell != "" {
		return tellReleased(ctx, rep, a, out.Tell)
	}
	return out.Err
}

// recordedNewer is the sync's recorded source commit when it is a later
// commit than the one this hydration, which committed nothing, comes from:
// two pushes whose output the destination holds already, hydrated out of
// order, leave the record at the later one. "" lets the record move.
func recordedNewer(ctx context.Context, d *worker.Deps, repo pull.Repository, a jobs.SyncHydrate) (string, error) {
	last, err := d.Store.SyncHydration(ctx, a.FullName, a.Target)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if last.FailedCommit != "" || last.SourceCommit == "" || last.SourceCommit == a.HeadSHA {
		return "", nil
	}
	newer, err := isAncestor(ctx, repo, a.HeadSHA, last.SourceCommit)
	if err != nil || !newer {
		return "", err
	}
	return last.SourceCommit, nil
}

// tellReleased says on the PR whose takeover ended how the destination was
// given back.
func tellReleased(ctx context.Context, rep *report.Reporter, a jobs.SyncHydrate, what string) error {
	_, err := rep.Comment(ctx, a.PR, fmt.Sprintf("The takeover of %s by #%d ended (%s), %s", markdown.Quote(a.Target), a.PR, a.Note, what))
	return err
}

// ensureCheck creates the check, or on a retry finds the one the first
// attempt created.
func ensureCheck(ctx context.Context, rep *report.Reporter, retry bool, c report.Check) (int64, error) {
	if retry {
		cur, err := rep.FindCheck(ctx, c.HeadSHA, c.Name)
		if err != nil {
			return 0, err
		}
		if cur != nil && !cur.Completed() {
			return cur.ID, rep.UpdateCheck(ctx, cur.ID, c)
		}
	}
	return rep.CreateCheck(ctx, c)
}

// buildSync hydrates a sync from the tree at sha, annotated with
// sourceCommit (the head's SHA when a preview hydrates the base). The
// build fetches only the remote references the server allows, and ends
// with the job or the server's hydrate.timeout.
func buildSync(ctx context.Context, d *worker.Deps, repo jobs.Repo, spec jobs.SyncSpec, sha, sourceCommit string) (*hydrate.Result, error) {
	root, release, err := d.Fetch(ctx, repo, sha)
	if err != nil {
		return nil, err
	}
	defer release()
	return hydrate.Hydrate(ctx, hydrate.Input{
		Sync: spec.Name, Root: root, Source: spec.Source, SourceRepo: repo.FullName, SourceCommit: sourceCommit,
		Images: imageRules(spec), Resolver: imageResolver,
		AllowRemote: d.Config.Hydrate.AllowRemote, Timeout: d.Config.Hydrate.Timeout,
	})
}

// defaultBranchGuard keeps a hydration from the default branch from writing
// while a PR has taken the sync over, or over a newer source commit.
func defaultBranchGuard(d *worker.Deps, repo pull.Repository, sync, commit string) gitcommit.Guard {
	return func(ctx context.Context, cur *hydrate.SyncState) (string, error) {
		if t, err := d.Store.Takeover(ctx, repo.FullName(), sync); err == nil {
			return fmt.Sprintf("#%d took it over until %s", t.PR, when(t.ExpiresAt)), nil
		} else if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
		if cur == nil || cur.Takeover != nil || cur.SourceRepo != repo.FullName() || cur.SourceCommit == "" || cur.SourceCommit == commit {
			return "", nil
		}
		newer, err := isAncestor(ctx, repo, commit, cur.SourceCommit)
		if err != nil || !newer {
			return "", err
		}
		return fmt.Sprintf("the destination already holds the newer source commit %s", report.Short(cur.SourceCommit)), nil
	}
}

// isAncestor reports whether older is an ancestor of newer, through the
// compare API (newer is then "ahead" of older).
func isAncestor(ctx context.Context, repo pull.Repository, older, newer string) (bool, error) {
	cmp, err := repo.Compare(ctx, older, newer)
	if errors.Is(err, pull.ErrNotFound) {
		return false, nil // unrelated or unknown commits: nothing to protect
	}
	if err != nil {
		return false, err
	}
	return cmp.Status == "ahead", nil
}

// hydrateReport is the title and summary of a successful hydration.
func hydrateReport(d *worker.Deps, name string, spec jobs.SyncSpec, sha string, res *hydrate.Result, out *gitcommit.Result) (string, string) {
	dest := writtenDest(spec)
	var b strings.Builder
	title := "No changes"
	if out.Commit != "" {
		title = fmt.Sprintf("%s, %s changed", words.Count(res.Resources, "resource", "resources"), words.Count(len(out.Changes), "file", "files"))
		fmt.Fprintf(&b, "Hydrated %s (%s) at %s into [%s %s](%s): **%s**, **%s changed**.\n\n",
			markdown.Quote(name), markdown.Quote(spec.Source), report.Short(sha), markdown.Quote(dest.Branch+":"+dest.Path), report.Short(out.Commit), d.CommitURL(spec.DestRepo, out.Commit),
			words.Count(res.Resources, "resource", "resources"), words.Count(len(out.Changes), "file", "files"))
	} else if out.SameAs != "" {
		fmt.Fprintf(&b, "Hydrated %s (%s) at %s: **%s**, the same as %s holds from %s but for the source commit they name, "+
			"so nothing was committed; the files' %s annotations still name %s.\n\n",
			markdown.Quote(name), markdown.Quote(spec.Source), report.Short(sha), words.Count(res.Resources, "resource", "resources"),
			markdown.Quote(dest.Branch+":"+dest.Path), report.Short(out.SameAs), markdown.Quote(hydrate.SourceCommitAnnotation), report.Short(out.SameAs))
	} else {
		fmt.Fprintf(&b, "Hydrated %s (%s) at %s: **%s**; %s already holds them, so nothing was committed.\n\n",
			markdown.Quote(name), markdown.Quote(spec.Source), report.Short(sha), words.Count(res.Resources, "resource", "resources"), markdown.Quote(dest.Branch+":"+dest.Path))
	}
	if len(res.Kinds) > 0 {
		fmt.Fprintf(&b, "Kinds: %s\n\n", report.Names(res.Kinds))
	}
	if len(res.Pinned) > 0 {
		b.WriteString("Pinned images:\n")
		for _, p := range res.Pinned {
			fmt.Fprintf(&b, "- %s → %s\n", markdown.Quote(p.Name+":"+p.Tag), markdown.Quote(p.Digest))
		}
		b.WriteString("\n")
	}
	if len(out.Changes) > 0 {
		b.WriteString("<details><summary>Files changed</summary>\n\n")
		for _, c := range out.Changes {
			verb := "write"
			if c.Delete {
				verb = "delete"
			}
			fmt.Fprintf(&b, "- %s %s\n", verb, markdown.Quote(c.Path))
		}
		b.WriteString("\n</details>\n")
	}
	return title, b.String()
}

func buildFailure(name, sha string, err *hydrate.Error) string {
	return fmt.Sprintf("%s could not be hydrated at %s; nothing was committed.\n\n%s", markdown.Quote(name), report.Short(sha), markdown.Block("", err.Error()))
}

func pausedTitle(t *store.Takeover) string {
	return fmt.Sprintf("Paused by #%d until %s", t.PR, when(t.ExpiresAt))
}

// pausedSummary says why a taken-over sync is not hydrated; prURL is the
// page of the PR holding it.
func pausedSummary(t *store.Takeover, prURL string) string {
	return fmt.Sprintf("[#%d](%s) took %s over (@%s) until %s: pushes to the default branch do not hydrate it until the takeover "+
		"ends with `/release %s`, the Release button, the pull request closing, or expiry. Strata then hydrates the default branch's head.",
		t.PR, prURL, markdown.Quote(t.Sync), t.Holder, when(t.ExpiresAt), t.Sync)
}

func storePinned(in []hydrate.PinnedImage) []store.PinnedImage {
	out := make([]store.PinnedImage, 0, len(in))
	for _, p := range in {
		out = append(out, store.PinnedImage{Name: p.Name, Tag: p.Tag, Digest: p.Digest})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name+":"+out[i].Tag < out[j].Name+":"+out[j].Tag })
	return out
}
