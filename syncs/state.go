package syncs

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// A takeover's life, in the manner of helm-controller's reconcilers: its
// state is computed from the store's rows and the clock (TakeoverStateOf),
// and settle acts once per state, wherever a takeover is finished from:
// /takeover (an earlier holder's ending), /release, the expiry job, the
// periodic sweep and the holder PR closing.

// TakeoverState is where a takeover is in its life.
type TakeoverState string

const (
	// TakeoverHeld is a takeovers row whose time is not up: the PR's head
	// is in the destination, and pushes do not hydrate the sync.
	TakeoverHeld TakeoverState = "held"
	// TakeoverExpired is a takeovers row whose time is up: the sync is
	// still held until the expiry job (or, when that is gone, the sweep)
	// ends it.
	TakeoverExpired TakeoverState = "expired"
	// TakeoverEnding is a takeover_endings row: the takeover ended, and
	// its hand-back (the default branch's head hydrated back, which tells
	// the PR) is not enqueued yet. See store.EndTakeover.
	TakeoverEnding TakeoverState = "ending"
	// TakeoverReleased is no row: the hand-back is enqueued, or the sync
	// was never taken over.
	TakeoverReleased TakeoverState = "released"
)

// expirySlack is how early a takeover counts as expired: its expiry job is
// scheduled at the expiry by the queue's clock (the database's, on
// PostgreSQL), which may run a little ahead of Strata's.
const expirySlack = time.Second

// TakeoverStateOf is the state at now of t, a row as the store returned it:
// a takeover (Takeover, TakeoversOfPR), an ending (TakeoverEndings), or
// nil for none.
func TakeoverStateOf(t *store.Takeover, now time.Time) TakeoverState {
	switch {
	case t == nil:
		return TakeoverReleased
	case !t.EndedAt.IsZero():
		return TakeoverEnding
	case !t.ExpiresAt.After(now.Add(expirySlack)):
		return TakeoverExpired
	}
	return TakeoverHeld
}

// repoScope is where settle reports: the takeover's repository, its
// reporter, and its default branch ("" reads it from GitHub).
type repoScope struct {
	repo          jobs.Repo
	rep           *report.Reporter
	defaultBranch string
}

// scopeOf is the scope of a takeover read outside a job of its repository
// (by the sweep).
func scopeOf(d *worker.Deps, t *store.Takeover) (repoScope, error) {
	owner, name, _ := strings.Cut(t.Repo, "/")
	repo := jobs.NewRepo(t.InstallationID, owner, name)
	rep, err := d.Reporter(repo)
	return repoScope{repo: repo, rep: rep}, err
}

// settle acts on a takeover once per state until it is at rest. end says
// why the caller ends it ("@alice released it", "the pull request was
// closed"); "" only finishes what the clock or an earlier failure decided.
//
//	held      ended with end (store.EndTakeover) when end is given; else left as it is
//	expired   ended with end when given, else as expired (store.ExpireTakeover)
//	ending    handed back (handBack)
//	released  nothing
//
// Each step may run again: a failure leaves the takeover in its state for
// the caller's retry, the next job on the sync or PR, or the sweep. A store
// step that finds the row changed (another job ended it, the PR took it
// again for longer) leaves it to whoever changed it.
func settle(ctx context.Context, d *worker.Deps, in repoScope, t *store.Takeover, end string) error {
	for {
		now := d.Now()
		var err error
		switch TakeoverStateOf(t, now) {
		case TakeoverHeld:
			if end == "" {
				return nil
			}
			t, err = d.Store.EndTakeover(ctx, t.Repo, t.Sync, t.PR, end)
		case TakeoverExpired:
			if end != "" {
				t, err = d.Store.EndTakeover(ctx, t.Repo, t.Sync, t.PR, end)
			} else {
				t, err = d.Store.ExpireTakeover(ctx, t.Repo, t.Sync, t.PR, now.Add(expirySlack), expiredWhy)
			}
		case TakeoverEnding:
			return handBack(ctx, d, in, t)
		case TakeoverReleased:
			return nil
		}
		if err != nil {
			return err
		}
	}
}

func expiredWhy(t *store.Takeover) string { return "it expired at " + when(t.ExpiresAt) }

// settleEndings settles the endings of a repo's takeovers (of one PR unless
// pr is 0, of one sync unless sync is "") and returns those handed back.
// Each job that ends a takeover calls it, so that its retries finish what a
// failure left.
func settleEndings(ctx context.Context, d *worker.Deps, in repoScope, pr int, sync string) ([]*store.Takeover, error) {
	endings, err := d.Store.TakeoverEndings(ctx, in.repo.FullName, pr, time.Time{})
	if err != nil {
		return nil, err
	}
	var done []*store.Takeover
	var errs []error
	for _, t := range endings {
		if sync != "" && t.Sync != sync {
			continue
		}
		if err := settle(ctx, d, in, t, ""); err != nil {
			errs = append(errs, err)
			continue
		}
		done = append(done, t)
	}
	return done, errors.Join(errs...)
}

// handBack is what an ending takeover needs: it completes the takeover's
// check and enqueues the hydration of the default branch's head, which
// tells the PR when done, and only then forgets the ending. Every step may
// run again: a failure leaves the ending for a retry.
func handBack(ctx context.Context, d *worker.Deps, in repoScope, t *store.Takeover) error {
	rep, repo, why := in.rep, in.repo, t.Why
	if t.CheckRunID != 0 {
		c := takeoverCheck(d, t, t.HeadSHA, "")
		c.Status, c.Conclusion, c.Actions = "", "success", nil
		c.Title = "Released"
		c.Summary = fmt.Sprintf("The takeover of %s by #%d ended: %s. Strata hydrates the default branch's head into it again.", markdown.Quote(t.Sync), t.PR, why)
		if err := rep.UpdateCheck(ctx, t.CheckRunID, c); err != nil {
			return err
		}
	}
	reader, err := d.Repo(repo)
	if err != nil {
		return err
	}
	head, branch, err := reader.BranchHead(ctx, in.defaultBranch)
	if err != nil {
		return err
	}
	tell := func(what string) error {
		if _, err := rep.Comment(ctx, t.PR, fmt.Sprintf("The takeover of %s by #%d ended (%s), %s", markdown.Quote(t.Sync), t.PR, why, what)); err != nil {
			return err
		}
		return d.Store.FinishTakeoverEnding(ctx, t)
	}
	cfg, err := d.LoadRepoConfig(ctx, reader, head, branch)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		return tell(fmt.Sprintf("but %s on %s is invalid, so nothing was hydrated.\n\n%s", markdown.Quote(config.RepoFile), markdown.Quote(branch), worker.ConfigErrorComment(bad)))
	}
	if err != nil {
		return err
	}
	s, err := pickSync(cfg.Syncs, t.Sync)
	if err != nil || s.Name != t.Sync {
		return tell(fmt.Sprintf("but %s is not a sync on %s, so its destination is left as it is.", markdown.Quote(t.Sync), markdown.Quote(branch)))
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
