package syncs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/gitcommit"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// takeoverCheck is a held takeover as its check on the holder's head shows it.
func takeoverCheck(d *worker.Deps, t *store.Takeover, headSHA, dest string) report.Check {
	return report.Check{
		Name: checks.Takeover(t.Sync), HeadSHA: headSHA, Status: "in_progress", ExternalID: checks.ExternalID(t.PR),
		DetailsURL: d.PRURL(t.Repo, t.PR),
		Title:      "Taken over until " + when(t.ExpiresAt),
		Summary: fmt.Sprintf("#%d holds %s for @%s until %s: this pull request's head is hydrated into %s, and pushes to the "+
			"default branch do not hydrate %s meanwhile.\n\nComment `/release %s` or press Release to give it back; it also ends "+
			"when the pull request closes or the time is up. Strata then hydrates the default branch's head.",
			t.PR, markdown.Quote(t.Sync), t.Holder, when(t.ExpiresAt), markdown.Quote(dest), markdown.Quote(t.Sync), t.Sync),
		Actions: []report.Action{{Label: "Release", Description: "End the takeover", Identifier: checks.ButtonRelease}},
	}
}

// takeoverCommand answers /takeover [SYNC] [DURATION]: an open,
// same-repository PR takes the sync's destination for a while and its head
// is hydrated there.
func takeoverCommand(ctx context.Context, d *worker.Deps, c *worker.CommandContext, cmd command.Command) error {
	a := c.Job
	head := c.PR.HeadSHA()
	refuse := func(reason string) error {
		return c.Reply(ctx, fmt.Sprintf("@%s `/takeover` refused: %s", a.User, reason))
	}
	start := decideTakeover(c.PR, c.Config.Syncs, cmd.(command.Takeover))
	if start.Refuse != "" {
		return refuse(start.Refuse)
	}
	s := start.Sync
	// An earlier holder's ending not finished yet (its job is retrying) is
	// finished here first, so that its PR hears of it before this takeover
	// writes. It does not hold this takeover up: if GitHub fails now, that
	// ending's retries or the sweep finish it, and its hand-back then finds
	// the sync taken over and only tells its PR.
	in := repoScope{repo: a.Repo, rep: c.Reporter, defaultBranch: c.PR.DefaultBranch()}
	_, err := settleEndings(ctx, d, in, 0, s.Name)
	worker.Warn(ctx, err, "finish an earlier takeover's ending")
	until := d.Now().Add(start.Duration).Truncate(time.Second)
	held, ok, err := d.Store.TryTakeover(ctx, store.Takeover{Repo: a.FullName, Sync: s.Name, PR: a.PR, Holder: a.User,
		HeadSHA: head, ExpiresAt: until, InstallationID: a.InstallationID})
	if err != nil {
		return err
	}
	if !ok {
		url := d.PRURL(a.FullName, held.PR)
		no := takenBy(s.Name, held, url)
		if _, err := c.Reporter.CreateCheck(ctx, report.Check{Name: checks.Takeover(s.Name), HeadSHA: head, Conclusion: "failure",
			ExternalID: checks.ExternalID(a.PR), DetailsURL: url, Title: no.Title, Summary: no.Summary}); err != nil {
			return err
		}
		return refuse(no.Reason)
	}
	spec := syncSpec(a.Repo, s)
	if err := showTakeover(ctx, d, c.Reporter, held, head, spec); err != nil {
		return err
	}
	if _, err := d.Queue.Enqueue(ctx, jobs.SyncTakeover{Repo: a.Repo, PR: a.PR, Target: s.Name, HeadSHA: head, Sync: spec,
		User: a.User, Until: until}, nil); err != nil {
		return err
	}
	// The queue schedules by its own clock: the job is due when the time
	// left by Strata's clock has passed.
	if _, err := d.Queue.Enqueue(ctx, jobs.TakeoverExpiry{Repo: a.Repo, PR: a.PR, Target: s.Name, Until: until,
		DefaultBranch: c.PR.DefaultBranch()}, &river.InsertOpts{ScheduledAt: time.Now().Add(until.Sub(d.Now()))}); err != nil {
		return err
	}
	dest := destOf(spec)
	return c.Reply(ctx, fmt.Sprintf("@%s took over %s until %s%s: %s is being hydrated into %s of %s. "+
		"Pushes to the default branch do not hydrate %s until `/release %s`, the Release button, this pull request closing, or expiry.",
		a.User, markdown.Quote(s.Name), when(until), start.Capped, report.Short(head), markdown.Quote(dest.Branch+":"+dest.Path), spec.DestRepo, markdown.Quote(s.Name), s.Name))
}

// showTakeover puts the takeover's check on headSHA, completing the one on an
// older head as moved.
func showTakeover(ctx context.Context, d *worker.Deps, rep *report.Reporter, t *store.Takeover, headSHA string, spec jobs.SyncSpec) error {
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
		old.Title = "Takeover moved to " + report.Short(headSHA)
		old.Summary = fmt.Sprintf("#%d still holds %s; its check moved to the new head %s.", t.PR, markdown.Quote(t.Sync), headSHA)
		if err := rep.UpdateCheck(ctx, t.CheckRunID, old); err != nil {
			return err
		}
	}
	t.CheckRunID, t.HeadSHA = id, headSHA
	return d.Store.SetTakeoverCheck(ctx, t.Repo, t.Sync, t.PR, headSHA, id)
}

// followHead hydrates a new head of a PR holding takeovers.
func followHead(ctx context.Context, d *worker.Deps, rep *report.Reporter, ev jobs.PullRequest) error {
	held, err := d.Store.TakeoversOfPR(ctx, ev.FullName, ev.PR)
	if err != nil || len(held) == 0 {
		return err
	}
	repo, err := d.Repo(ev.Repo)
	if err != nil {
		return err
	}
	cfg, err := d.LoadRepoConfig(ctx, repo, ev.HeadSHA, ev.DefaultBranch)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		_, err := rep.Comment(ctx, ev.PR, worker.ConfigErrorComment(bad)+"\n\nThe new head was not hydrated into the syncs this pull request holds.")
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
	d *worker.Deps
}

func (w *syncTakeoverWorker) Timeout(*river.Job[jobs.SyncTakeover]) time.Duration {
	return jobs.SyncHydrateTimeout
}

// Work is the job in three steps: hydrate gathers what the hydration of
// the PR's head gave, takeoverOutcomeOf decides what the takeover's check
// is told and the queue hears, and Work does it once.
func (w *syncTakeoverWorker) Work(ctx context.Context, job *river.Job[jobs.SyncTakeover]) error {
	a, d := job.Args, w.d
	t, err := w.holds(ctx, a)
	if err != nil || t == nil {
		return err
	}
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	ran, err := w.hydrate(ctx, a, t)
	if err != nil {
		return err
	}
	out := takeoverOutcomeOf(a, ran)
	if out.Note == "" || t.CheckRunID == 0 {
		return out.Err
	}
	spec := a.Sync
	c := takeoverCheck(d, t, a.HeadSHA, spec.DestRepo+":"+spec.DestBranch+":"+spec.DestPath)
	c.Summary = out.Note + "\n\n" + c.Summary
	err = rep.UpdateCheck(ctx, t.CheckRunID, c)
	if out.Err != nil {
		worker.Warn(ctx, err, "report the failed takeover hydration")
		return out.Err
	}
	return err
}

// holds is the takeover the job hydrates for, or nil when the PR released
// it or a newer head is on its way.
func (w *syncTakeoverWorker) holds(ctx context.Context, a jobs.SyncTakeover) (*store.Takeover, error) {
	t, err := w.d.Store.Takeover(ctx, a.FullName, a.Target)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (t.PR != a.PR || t.HeadSHA != a.HeadSHA)) {
		return nil, nil
	}
	return t, err
}

// hydrate gathers what hydrating the PR's head into the destination gave,
// with the takeover recorded in .strata-sync.yaml: the commit goes only
// while the PR still holds the sync at this head. An error is GitHub's
// client: nothing ran.
func (w *syncTakeoverWorker) hydrate(ctx context.Context, a jobs.SyncTakeover, t *store.Takeover) (takeoverRun, error) {
	d, spec := w.d, a.Sync
	gh, err := d.Client(a.Repo)
	if err != nil {
		return takeoverRun{}, err
	}
	res, err := buildSync(ctx, d, a.Repo, spec, a.HeadSHA, a.HeadSHA)
	if err != nil {
		return takeoverRun{BuildErr: err}, nil
	}
	state := res.State
	state.Takeover = &hydrate.Takeover{PR: a.PR, By: t.Holder, Head: a.HeadSHA, Until: t.ExpiresAt}
	res.Files[hydrate.SyncStateFile] = state.Marshal()
	msg := fmt.Sprintf("Hydrate %s from #%d (%s@%s): takeover by @%s until %s\n\nSource: %s@%s\nSync: %s\n",
		a.Target, a.PR, a.FullName, report.Short(a.HeadSHA), t.Holder, when(t.ExpiresAt), a.FullName, a.HeadSHA, a.Target)
	out, err := (gitcommit.Writer{GitHub: gh}).Commit(ctx, destOf(spec), res.Files, msg, func(ctx context.Context, _ *hydrate.SyncState) (string, error) {
		if t, err := w.holds(ctx, a); err != nil || t == nil {
			return "the takeover ended or moved to a newer head", err
		}
		return "", nil
	})
	if err != nil {
		return takeoverRun{CommitErr: err}, nil
	}
	if out.Skipped != "" {
		return takeoverRun{Skipped: true}, nil
	}
	_, summary := hydrateReport(d, a.Target, spec, a.HeadSHA, res, out)
	return takeoverRun{Summary: summary}, nil
}

// takeoverInterrupted reports a takeover hydration cut short by its process
// dying: it is not run again, since the destination may have changed since.
func takeoverInterrupted(ctx context.Context, d *worker.Deps, job queue.Interrupted) error {
	var a jobs.SyncTakeover
	if err := json.Unmarshal(job.Args, &a); err != nil {
		return err
	}
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	_, err = rep.Comment(ctx, a.PR, fmt.Sprintf("Hydrating %s into %s for the takeover of %s was interrupted when Strata stopped, "+
		"and was not run again. Check %s of %s, and comment `/takeover %s` to hydrate this head again.",
		report.Short(a.HeadSHA), markdown.Quote(a.Sync.DestBranch+":"+a.Sync.DestPath), markdown.Quote(a.Target), markdown.Quote(a.Sync.DestBranch), a.Sync.DestRepo, a.Target))
	return err
}

// releaseCommand answers /release [SYNC]: the PR gives a sync back, and the
// default branch's head is hydrated into it.
func releaseCommand(ctx context.Context, d *worker.Deps, c *worker.CommandContext, cmd command.Command) error {
	a := c.Job
	name := cmd.(command.Release).Sync
	in := repoScope{repo: a.Repo, rep: c.Reporter, defaultBranch: c.PR.DefaultBranch()}
	// A retry of this command (or a /release after a failed one) finds the
	// takeover it ended as an ending and finishes it.
	done, err := settleEndings(ctx, d, in, a.PR, name)
	if err != nil {
		return err
	}
	held, err := d.Store.TakeoversOfPR(ctx, a.FullName, a.PR)
	if err != nil {
		return err
	}
	r := decideRelease(name, held, done)
	if r.Reply != "" {
		return c.Reply(ctx, fmt.Sprintf("@%s %s", a.User, r.Reply))
	}
	if r.Release == nil {
		return nil
	}
	return settle(ctx, d, in, r.Release, "@"+a.User+" released it")
}

// endTakeoversOfPR gives back every sync a closed PR holds. The endings an
// earlier attempt left go first: they are the older.
func endTakeoversOfPR(ctx context.Context, d *worker.Deps, in repoScope, pr int, why string) error {
	_, err := settleEndings(ctx, d, in, pr, "")
	errs := []error{err}
	held, err := d.Store.TakeoversOfPR(ctx, in.repo.FullName, pr)
	if err != nil {
		return errors.Join(append(errs, err)...)
	}
	for _, t := range held {
		errs = append(errs, settle(ctx, d, in, t, why))
	}
	return errors.Join(errs...)
}

// takeoverExpiryWorker ends a takeover whose time is up.
type takeoverExpiryWorker struct {
	river.WorkerDefaults[jobs.TakeoverExpiry]
	d *worker.Deps
}

func (w *takeoverExpiryWorker) Timeout(*river.Job[jobs.TakeoverExpiry]) time.Duration {
	return jobs.TakeoverEndTimeout
}

func (w *takeoverExpiryWorker) Work(ctx context.Context, job *river.Job[jobs.TakeoverExpiry]) error {
	a, d := job.Args, w.d
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	in := repoScope{repo: a.Repo, rep: rep, defaultBranch: a.DefaultBranch}
	// An ending of this takeover that an earlier attempt (or another job)
	// left is finished first.
	_, err = settleEndings(ctx, d, in, a.PR, a.Target)
	errs := []error{err}
	// Then the takeover, if the PR still holds the sync: ended if expired;
	// if it was extended, a later expiry job ends it.
	t, err := d.Store.Takeover(ctx, a.FullName, a.Target)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		errs = append(errs, err)
	case t.PR == a.PR:
		errs = append(errs, settle(ctx, d, in, t, ""))
	}
	return errors.Join(errs...)
}
