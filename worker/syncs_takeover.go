package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
)

// takeoverCheck is a held takeover as its check on the holder's head shows it.
func takeoverCheck(d *Deps, t *store.Takeover, headSHA, dest string) report.Check {
	return report.Check{
		Name: takeoverCheckName(t.Sync), HeadSHA: headSHA, Status: "in_progress", ExternalID: externalID(t.PR),
		DetailsURL: prURL(d, t.Repo, t.PR),
		Title:      "Taken over until " + when(t.ExpiresAt),
		Summary: fmt.Sprintf("#%d holds `%s` for @%s until %s: this pull request's head is hydrated into `%s`, and pushes to the "+
			"default branch do not hydrate `%s` meanwhile.\n\nComment `/release %s` or press Release to give it back; it also ends "+
			"when the pull request closes or the time is up. Strata then hydrates the default branch's head.",
			t.PR, t.Sync, t.Holder, when(t.ExpiresAt), dest, t.Sync, t.Sync),
		Actions: []report.Action{{Label: "Release", Description: "End the takeover", Identifier: "release"}},
	}
}

// takeoverCommand answers /takeover [SYNC] [DURATION]: a writer's open,
// same-repository PR takes the sync's destination for a while and its head
// is hydrated there.
func takeoverCommand(ctx context.Context, c *CommandContext, cmd command.Command) error {
	a, d := c.Job, c.Deps
	tc := cmd.(command.Takeover)
	head := c.PR.GetHead().GetSHA()
	refuse := func(reason string) error {
		return c.Reply(ctx, fmt.Sprintf("@%s `/takeover` refused: %s", a.User, reason))
	}
	if c.PR.GetState() != "open" {
		return refuse("this pull request is closed.")
	}
	if c.PR.GetHead().GetRepo().GetFullName() != a.FullName {
		return refuse("this pull request comes from a fork; a fork's head is never hydrated into a destination.")
	}
	s, err := pickSync(c.Config.Syncs, tc.Sync)
	if err != nil {
		return refuse(err.Error())
	}
	if ok, perm, err := hasPermission(ctx, c.GitHub, a.Repo, a.User, d.Config.ApplyPermission); err != nil {
		return err
	} else if !ok {
		return refuse(fmt.Sprintf("@%s has %s permission on this repository; a takeover needs %s or higher.", a.User, perm, d.Config.ApplyPermission))
	}
	dur, capped := tc.Duration, ""
	if dur == 0 {
		dur = s.Takeover.Default
	}
	if dur > s.Takeover.Max {
		dur, capped = s.Takeover.Max, fmt.Sprintf(" (capped at the sync's maximum, %s)", s.Takeover.Max)
	}
	// An earlier holder's ending not finished yet (its job is retrying) is
	// finished here first, so that its PR hears of it before this takeover
	// writes. It does not hold this takeover up: if GitHub fails now, that
	// ending's retries or the sweep finish it, and its hand-back then finds
	// the sync taken over and only tells its PR.
	_, _ = finishEndings(ctx, d, c.Reporter, a.Repo, 0, s.Name, c.PR.GetBase().GetRepo().GetDefaultBranch())
	until := time.Now().Add(dur).Truncate(time.Second)
	held, ok, err := d.Store.TryTakeover(ctx, store.Takeover{Repo: a.FullName, Sync: s.Name, PR: a.PR, Holder: a.User,
		HeadSHA: head, ExpiresAt: until, InstallationID: a.InstallationID})
	if err != nil {
		return err
	}
	if !ok {
		url := prURL(d, a.FullName, held.PR)
		if _, err := c.Reporter.CreateCheck(ctx, report.Check{Name: takeoverCheckName(s.Name), HeadSHA: head, Conclusion: "failure",
			ExternalID: externalID(a.PR), DetailsURL: url, Title: fmt.Sprintf("Taken over by #%d", held.PR),
			Summary: fmt.Sprintf("`%s` is taken over by [#%d](%s) (@%s) until %s. Nothing was hydrated.", s.Name, held.PR, url, held.Holder, when(held.ExpiresAt)),
		}); err != nil {
			return err
		}
		return refuse(fmt.Sprintf("`%s` is taken over by #%d (@%s) until %s. Try again once it is released.",
			s.Name, held.PR, held.Holder, when(held.ExpiresAt)))
	}
	spec := syncSpec(a.Repo, s)
	if err := showTakeover(ctx, d, c.Reporter, held, head, spec); err != nil {
		return err
	}
	if _, err := d.Queue.Enqueue(ctx, jobs.SyncTakeover{Repo: a.Repo, PR: a.PR, Target: s.Name, HeadSHA: head, Sync: spec,
		User: a.User, Until: until}, nil); err != nil {
		return err
	}
	if _, err := d.Queue.Enqueue(ctx, jobs.TakeoverExpiry{Repo: a.Repo, PR: a.PR, Target: s.Name, Until: until,
		DefaultBranch: c.PR.GetBase().GetRepo().GetDefaultBranch()}, &river.InsertOpts{ScheduledAt: until}); err != nil {
		return err
	}
	dest := destOf(spec)
	return c.Reply(ctx, fmt.Sprintf("@%s took over `%s` until %s%s: %s is being hydrated into `%s:%s` of %s. "+
		"Pushes to the default branch do not hydrate `%s` until `/release %s`, the Release button, this pull request closing, or expiry.",
		a.User, s.Name, when(until), capped, short(head), dest.Branch, dest.Path, spec.DestRepo, s.Name, s.Name))
}

// showTakeover puts the takeover's check on headSHA, completing the one on an
// older head as moved.
func showTakeover(ctx context.Context, d *Deps, rep *report.Reporter, t *store.Takeover, headSHA string, spec jobs.SyncSpec) error {
	dest := spec.DestRepo + ":" + spec.DestBranch + ":" + spec.DestPath
	c := takeoverCheck(d, t, headSHA, dest)
	if t.CheckRunID != 0 && t.HeadSHA == headSHA {
		return rep.UpdateCheck(ctx, t.CheckRunID, c)
	}
	id, err := rep.CreateCheck(ctx, c)
	if err != nil {
		return err
	}
	if t.CheckRunID != 0 {
		old := takeoverCheck(d, t, t.HeadSHA, dest)
		old.Status, old.Conclusion, old.Actions = "", "neutral", nil
		old.Title = "Takeover moved to " + short(headSHA)
		old.Summary = fmt.Sprintf("#%d still holds `%s`; its check moved to the new head %s.", t.PR, t.Sync, headSHA)
		if err := rep.UpdateCheck(ctx, t.CheckRunID, old); err != nil {
			return err
		}
	}
	t.CheckRunID, t.HeadSHA = id, headSHA
	return d.Store.SetTakeoverCheck(ctx, t.Repo, t.Sync, t.PR, headSHA, id)
}

// followHead hydrates a new head of a PR holding takeovers.
func followHead(ctx context.Context, d *Deps, rep *report.Reporter, ev jobs.PullRequest) error {
	held, err := d.Store.TakeoversOfPR(ctx, ev.FullName, ev.PR)
	if err != nil || len(held) == 0 {
		return err
	}
	cfg, err := LoadRepoConfig(ctx, rep.REST, ev.Owner, ev.Name, ev.HeadSHA, ev.DefaultBranch)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		_, err := rep.Comment(ctx, ev.PR, configErrorComment(bad)+"\n\nThe new head was not hydrated into the syncs this pull request holds.")
		return err
	}
	if err != nil {
		return err
	}
	for _, t := range held {
		if t.HeadSHA == ev.HeadSHA {
			continue // a retried event
		}
		s, err := pickSync(cfg.Syncs, t.Sync)
		if err != nil {
			continue // the head dropped the sync: the takeover stays on the last head until released
		}
		spec := syncSpec(ev.Repo, s)
		if err := showTakeover(ctx, d, rep, t, ev.HeadSHA, spec); err != nil {
			return err
		}
		if _, err := d.Queue.Enqueue(ctx, jobs.SyncTakeover{Repo: ev.Repo, PR: ev.PR, Target: t.Sync, HeadSHA: ev.HeadSHA, Sync: spec,
			User: t.Holder, Until: t.ExpiresAt}, nil); err != nil {
			return err
		}
	}
	return nil
}

// syncTakeoverWorker hydrates the head of the PR holding a sync into its
// destination, with the takeover recorded in .strata-sync.yaml.
type syncTakeoverWorker struct {
	river.WorkerDefaults[jobs.SyncTakeover]
	d *Deps
}

func (w *syncTakeoverWorker) Timeout(*river.Job[jobs.SyncTakeover]) time.Duration {
	return jobs.SyncHydrateTimeout
}

func (w *syncTakeoverWorker) Work(ctx context.Context, job *river.Job[jobs.SyncTakeover]) error {
	a, d := job.Args, w.d
	holds := func(ctx context.Context) (*store.Takeover, error) {
		t, err := d.Store.Takeover(ctx, a.FullName, a.Target)
		if errors.Is(err, store.ErrNotFound) || (err == nil && (t.PR != a.PR || t.HeadSHA != a.HeadSHA)) {
			return nil, nil // released, or a newer head is on its way
		}
		return t, err
	}
	t, err := holds(ctx)
	if err != nil || t == nil {
		return err
	}
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	spec := a.Sync
	check := takeoverCheck(d, t, a.HeadSHA, spec.DestRepo+":"+spec.DestBranch+":"+spec.DestPath)
	update := func(note string) error {
		if t.CheckRunID == 0 {
			return nil
		}
		c := check
		c.Summary = note + "\n\n" + check.Summary
		return rep.UpdateCheck(ctx, t.CheckRunID, c)
	}
	res, err := buildSync(ctx, d, rep.REST, a.Repo, spec, a.HeadSHA, a.HeadSHA)
	var bad *hydrate.Error
	if errors.As(err, &bad) {
		return update(buildFailure(a.Target, a.HeadSHA, bad))
	}
	if err != nil {
		_ = update(fmt.Sprintf("Hydrating %s failed: `%v`. Push again or comment `/takeover %s` to retry.", short(a.HeadSHA), err, a.Target))
		return err
	}
	state := res.State
	state.Takeover = &hydrate.Takeover{PR: a.PR, By: t.Holder, Head: a.HeadSHA, Until: t.ExpiresAt}
	res.Files[hydrate.SyncStateFile] = state.Marshal()
	msg := fmt.Sprintf("Hydrate %s from #%d (%s@%s): takeover by @%s until %s\n\nSource: %s@%s\nSync: %s\n",
		a.Target, a.PR, a.FullName, short(a.HeadSHA), t.Holder, when(t.ExpiresAt), a.FullName, a.HeadSHA, a.Target)
	out, err := commitFiles(ctx, rep.REST, destOf(spec), res.Files, msg, func(ctx context.Context, _ *hydrate.SyncState) (string, error) {
		if t, err := holds(ctx); err != nil || t == nil {
			return "the takeover ended or moved to a newer head", err
		}
		return "", nil
	})
	if err != nil {
		_ = update(fmt.Sprintf("Hydrating %s failed: `%v`. Push again or comment `/takeover %s` to retry.", short(a.HeadSHA), err, a.Target))
		return err
	}
	if out.Skipped != "" {
		return nil
	}
	_, summary := hydrateReport(d, a.Target, spec, a.HeadSHA, res, out)
	return update(summary)
}

// takeoverInterrupted reports a takeover hydration cut short by its process
// dying: it is not run again, since the destination may have changed since.
func takeoverInterrupted(ctx context.Context, d *Deps, job queue.Interrupted) error {
	var a jobs.SyncTakeover
	if err := json.Unmarshal(job.Args, &a); err != nil {
		return err
	}
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	_, err = rep.Comment(ctx, a.PR, fmt.Sprintf("Hydrating %s into `%s` for the takeover of `%s` was interrupted when Strata stopped, "+
		"and was not run again. Check `%s` of %s, and comment `/takeover %s` to hydrate this head again.",
		short(a.HeadSHA), a.Sync.DestBranch+":"+a.Sync.DestPath, a.Target, a.Sync.DestBranch, a.Sync.DestRepo, a.Target))
	return err
}

// releaseCommand answers /release [SYNC]: the PR gives a sync back, and the
// default branch's head is hydrated into it.
func releaseCommand(ctx context.Context, c *CommandContext, cmd command.Command) error {
	a, d := c.Job, c.Deps
	name := cmd.(command.Release).Sync
	defaultBranch := c.PR.GetBase().GetRepo().GetDefaultBranch()
	// A retry of this command (or a /release after a failed one) finds the
	// takeover it ended as an ending and finishes it.
	done, err := finishEndings(ctx, d, c.Reporter, a.Repo, a.PR, name, defaultBranch)
	if err != nil {
		return err
	}
	held, err := d.Store.TakeoversOfPR(ctx, a.FullName, a.PR)
	if err != nil {
		return err
	}
	var t *store.Takeover
	for _, h := range held {
		if h.Sync == name || (name == "" && len(held) == 1) {
			t = h
		}
	}
	if t == nil {
		switch {
		case len(done) > 0 && (name != "" || len(held) == 0):
			return nil // given back just now: a retry, or a /release after a failed one
		case len(held) == 0:
			return c.Reply(ctx, fmt.Sprintf("@%s this pull request holds no takeover to release.", a.User))
		case name == "":
			return c.Reply(ctx, fmt.Sprintf("@%s this pull request holds several syncs; name one: `/release SYNC`.", a.User))
		}
		return c.Reply(ctx, fmt.Sprintf("@%s this pull request does not hold `%s`.", a.User, name))
	}
	if ok, perm, err := hasPermission(ctx, c.GitHub, a.Repo, a.User, d.Config.ApplyPermission); err != nil {
		return err
	} else if !ok {
		return c.Reply(ctx, fmt.Sprintf("@%s `/release` refused: @%s has %s permission on this repository; it needs %s or higher.",
			a.User, a.User, perm, d.Config.ApplyPermission))
	}
	gone, err := d.Store.EndTakeover(ctx, a.FullName, t.Sync, a.PR, "@"+a.User+" released it")
	if err != nil || gone == nil {
		return err
	}
	return endTakeover(ctx, d, c.Reporter, a.Repo, gone, defaultBranch)
}

// endTakeoversOfPR gives back every sync a closed PR holds.
func endTakeoversOfPR(ctx context.Context, d *Deps, rep *report.Reporter, repo jobs.Repo, pr int, defaultBranch, why string) error {
	held, err := d.Store.TakeoversOfPR(ctx, repo.FullName, pr)
	if err != nil {
		return err
	}
	for _, t := range held {
		if _, err := d.Store.EndTakeover(ctx, repo.FullName, t.Sync, pr, why); err != nil {
			return err
		}
	}
	// These endings, and those a failed attempt left.
	_, err = finishEndings(ctx, d, rep, repo, pr, "", defaultBranch)
	return err
}

// finishEndings finishes the endings of a repo's takeovers (of one PR unless
// pr is 0, of one sync unless sync is "") and returns those finished. Each
// job that ends a takeover calls it, so that its retries finish what a
// failure left; the sweep calls endTakeover on endings left longer.
func finishEndings(ctx context.Context, d *Deps, rep *report.Reporter, repo jobs.Repo, pr int, sync, defaultBranch string) ([]*store.Takeover, error) {
	endings, err := d.Store.TakeoverEndings(ctx, repo.FullName, pr, time.Time{})
	if err != nil {
		return nil, err
	}
	var done []*store.Takeover
	var errs []error
	for _, t := range endings {
		if sync != "" && t.Sync != sync {
			continue
		}
		if err := endTakeover(ctx, d, rep, repo, t, defaultBranch); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, t)
	}
	return done, errors.Join(errs...)
}

// sweepEndings finishes the endings that the jobs which ended them left
// (their attempts ran out, or nothing retries them): those older than an
// ending job's timeout, so that it does not race a job still at work. The
// periodic repin job runs it.
func sweepEndings(ctx context.Context, d *Deps) error {
	var ending []*store.Takeover
	var errs []error
	// A takeover whose expiry job failed for good (or was never scheduled,
	// when /takeover failed after claiming the sync) would hold its sync
	// forever: end the ones overdue by more than an expiry job's timeout.
	overdue, err := d.Store.OverdueTakeovers(ctx, time.Now().Add(-jobs.TakeoverEndTimeout))
	if err != nil {
		return err
	}
	for _, t := range overdue {
		e, err := d.Store.ExpireTakeover(ctx, t.Repo, t.Sync, t.PR, time.Now(),
			func(t *store.Takeover) string { return "it expired at " + when(t.ExpiresAt) })
		if e != nil {
			ending = append(ending, e)
		}
		errs = append(errs, err)
	}
	left, err := d.Store.TakeoverEndings(ctx, "", 0, time.Now().Add(-jobs.TakeoverEndTimeout))
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, t := range append(ending, left...) {
		owner, name, _ := strings.Cut(t.Repo, "/")
		repo := jobs.NewRepo(t.InstallationID, owner, name)
		rep, err := d.Reporter(repo)
		if err == nil {
			err = endTakeover(ctx, d, rep, repo, t, "")
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// endTakeover finishes an ending (see store.EndTakeover): it completes the
// takeover's check and enqueues the hydration of the default branch's head,
// which tells the PR when done, and only then forgets the ending. Every step
// may run again: a failure leaves the ending for a retry. defaultBranch ""
// reads it from GitHub.
func endTakeover(ctx context.Context, d *Deps, rep *report.Reporter, repo jobs.Repo, t *store.Takeover, defaultBranch string) error {
	why := t.Why
	if t.CheckRunID != 0 {
		c := takeoverCheck(d, t, t.HeadSHA, "")
		c.Status, c.Conclusion, c.Actions = "", "success", nil
		c.Title = "Released"
		c.Summary = fmt.Sprintf("The takeover of `%s` by #%d ended: %s. Strata hydrates the default branch's head into it again.", t.Sync, t.PR, why)
		if err := rep.UpdateCheck(ctx, t.CheckRunID, c); err != nil {
			return err
		}
	}
	head, branch, err := defaultHead(ctx, rep.REST, repo, defaultBranch)
	if err != nil {
		return err
	}
	tell := func(what string) error {
		if _, err := rep.Comment(ctx, t.PR, fmt.Sprintf("The takeover of `%s` by #%d ended (%s), %s", t.Sync, t.PR, why, what)); err != nil {
			return err
		}
		return d.Store.FinishTakeoverEnding(ctx, t)
	}
	cfg, err := LoadRepoConfig(ctx, rep.REST, repo.Owner, repo.Name, head, branch)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		return tell(fmt.Sprintf("but `%s` on `%s` is invalid, so nothing was hydrated.\n\n%s", config.RepoFile, branch, configErrorComment(bad)))
	}
	if err != nil {
		return err
	}
	s, err := pickSync(cfg.Syncs, t.Sync)
	if err != nil || s.Name != t.Sync {
		return tell(fmt.Sprintf("but `%s` is not a sync on `%s`, so its destination is left as it is.", t.Sync, branch))
	}
	if _, err := d.Queue.Enqueue(ctx, jobs.SyncHydrate{Repo: repo, PR: t.PR, Target: t.Sync, HeadSHA: head, Sync: syncSpec(repo, s),
		Reason: jobs.HydrateRelease, Note: why}, nil); err != nil {
		return err
	}
	// A crash right here enqueues the hand-back again on the retry: within a
	// minute the queue drops it as a duplicate, later it hydrates the same
	// thing once more.
	return d.Store.FinishTakeoverEnding(ctx, t)
}

// takeoverExpiryWorker ends a takeover whose time is up.
type takeoverExpiryWorker struct {
	river.WorkerDefaults[jobs.TakeoverExpiry]
	d *Deps
}

func (w *takeoverExpiryWorker) Timeout(*river.Job[jobs.TakeoverExpiry]) time.Duration {
	return jobs.TakeoverEndTimeout
}

func (w *takeoverExpiryWorker) Work(ctx context.Context, job *river.Job[jobs.TakeoverExpiry]) error {
	a, d := job.Args, w.d
	// Not expired (extended: a later expiry job ends it) or ended otherwise,
	// nothing to end; but an ending of this takeover that an earlier attempt
	// (or another job) left is finished below.
	if _, err := d.Store.ExpireTakeover(ctx, a.FullName, a.Target, a.PR, time.Now().Add(time.Second),
		func(t *store.Takeover) string { return "it expired at " + when(t.ExpiresAt) }); err != nil {
		return err
	}
	endings, err := d.Store.TakeoverEndings(ctx, a.FullName, a.PR, time.Time{})
	if err != nil || len(endings) == 0 {
		return err
	}
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	_, err = finishEndings(ctx, d, rep, a.Repo, a.PR, a.Target, a.DefaultBranch)
	return err
}
