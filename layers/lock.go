package layers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/command"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// lockCheck is the held lock as its check shows it.
func lockCheck(d *worker.Deps, l *store.Lock, headSHA string) report.Check {
	return report.Check{
		Name: checks.Lock(l.Layer), HeadSHA: headSHA, Status: "in_progress", ExternalID: checks.ExternalID(l.PR),
		DetailsURL: d.PRURL(l.Repo, l.PR),
		Title:      fmt.Sprintf("Locked by #%d", l.PR),
		Summary: fmt.Sprintf("Layer %s is locked by #%d for @%s since %s.\n\n"+
			"Other pull requests cannot plan or apply it until this one is merged or closed, "+
			"or the lock is released with `/unlock %s` or the Unlock button.",
			markdown.Quote(l.Layer), l.PR, l.Holder, l.LockedAt.Format(time.RFC3339), l.Layer),
		Actions: []report.Action{{Label: "Unlock", Description: "Release this PR's lock on the layer", Identifier: checks.ButtonUnlock}},
	}
}

// showLock makes the lock's check sit on headSHA: it creates it there, and
// completes the one on an older head as moved. l is the lock as it was
// before this plan (its head and check).
func showLock(ctx context.Context, d *worker.Deps, rep *report.Reporter, l *store.Lock, headSHA string) error {
	if lockOutcomeOf(l, true, headSHA) == lockShown {
		return nil
	}
	id, err := rep.CreateCheck(ctx, lockCheck(d, l, headSHA))
	if err != nil {
		return err
	}
	if l.CheckRunID != 0 {
		old := lockCheck(d, l, l.HeadSHA)
		old.Status, old.Conclusion, old.Actions = "", "neutral", nil
		old.Title = "Lock moved to " + report.Short(headSHA)
		old.Summary = fmt.Sprintf("#%d still holds the lock on %s; its check moved to the new head %s.", l.PR, markdown.Quote(l.Layer), headSHA)
		if err := rep.UpdateCheck(ctx, l.CheckRunID, old); err != nil {
			return err
		}
	}
	return d.Store.SetLockCheck(ctx, l.Repo, l.Layer, l.PR, headSHA, id)
}

// releaseLock completes a released lock's check.
func releaseLock(ctx context.Context, d *worker.Deps, rep *report.Reporter, l *store.Lock, why string) error {
	if l.CheckRunID == 0 {
		return nil
	}
	c := lockCheck(d, l, l.HeadSHA)
	c.Status, c.Conclusion, c.Actions = "", "success", nil
	c.Title = "Lock released"
	c.Summary = fmt.Sprintf("#%d released the lock on %s: %s.", l.PR, markdown.Quote(l.Layer), why)
	return rep.UpdateCheck(ctx, l.CheckRunID, c)
}

// unlockCommand answers /unlock [LAYER...]: it releases this PR's locks and
// discards its plans of those layers.
func unlockCommand(ctx context.Context, d *worker.Deps, c *worker.CommandContext, cmd command.Command) error {
	a := c.Job
	held, err := d.Store.LocksOfPR(ctx, a.FullName, a.PR)
	if err != nil {
		return err
	}
	var released []string
	for _, l := range unlockTargets(held, cmd.(command.Unlock).Layers) {
		gone, err := d.Store.Unlock(ctx, a.FullName, l.Layer, a.PR)
		if err != nil {
			return err
		}
		if gone == nil {
			continue
		}
		if err := releaseLock(ctx, d, c.Reporter, gone, "@"+a.User+" unlocked it"); err != nil {
			return err
		}
		released = append(released, l.Layer)
	}
	stateNote, err := unlockStateLocks(ctx, d, c, cmd.(command.Unlock).Layers)
	if err != nil {
		return err
	}
	if len(released) == 0 {
		if stateNote != "" {
			return c.Reply(ctx, stateNote)
		}
		return c.Reply(ctx, fmt.Sprintf("@%s this pull request holds no lock to release.", a.User))
	}
	if err := updateApplied(ctx, d, c.Reporter, a.Repo, a.PR, c.PR.HeadSHA()); err != nil {
		return err
	}
	return c.Reply(ctx, strings.TrimSpace(fmt.Sprintf("@%s released the lock on %s and discarded this PR's plans of it. Other pull requests can plan it now. %s",
		a.User, report.Names(released), stateNote)))
}

// releasePR releases every lock of a closed or merged PR but those its
// post-merge applies keep (they release them when they end), and deletes
// its plans.
func releasePR(ctx context.Context, d *worker.Deps, rep *report.Reporter, repo jobs.Repo, pr int, why string, keep map[string]bool) error {
	held, err := d.Store.LocksOfPR(ctx, repo.FullName, pr)
	if err != nil {
		return err
	}
	var errs []error
	if len(keep) == 0 {
		errs = append(errs, d.Store.DeletePlanChanges(ctx, repo.FullName, pr))
	}
	for _, l := range held {
		if keep[l.Layer] {
			continue
		}
		gone, err := d.Store.Unlock(ctx, repo.FullName, l.Layer, pr)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if gone != nil {
			errs = append(errs, releaseLock(ctx, d, rep, gone, why))
		}
	}
	errs = append(errs, d.Store.DeletePlansOfPR(ctx, repo.FullName, pr), d.Store.ForgetPR(ctx, repo.FullName, pr))
	return errors.Join(errs...)
}

// lockRepairWorker makes every lock's check agree with the store, at start-up:
// a check lost (or completed) while the server was down is created again on
// the holder's head.
type lockRepairWorker struct {
	river.WorkerDefaults[jobs.LockRepair]
	d *worker.Deps
}

func (w *lockRepairWorker) Timeout(*river.Job[jobs.LockRepair]) time.Duration {
	return jobs.LockRepairTimeout
}

var lockRepairPeriodic = worker.Periodic{ID: "layer_lock_repair", Every: time.Hour, AtStart: true, Args: jobs.LockRepair{}}

func (w *lockRepairWorker) Work(ctx context.Context, job *river.Job[jobs.LockRepair]) error {
	locks, err := w.d.Store.AllLocks(ctx)
	if err != nil {
		return err
	}
	return worker.Each(ctx, locks, w.repair)
}

func (w *lockRepairWorker) repair(ctx context.Context, l *store.Lock) error {
	if l.InstallationID == 0 {
		return nil
	}
	// The plan that took the lock is creating its check (TryLock,
	// CreateCheck, SetLockCheck); repairing now would make a second one.
	if l.CheckRunID == 0 && time.Since(l.LockedAt) < jobs.CommandTimeout {
		return nil
	}
	owner, name, _ := cutRepo(l.Repo)
	rep, err := w.d.Reporter(jobs.NewRepo(l.InstallationID, owner, name))
	if err != nil {
		return err
	}
	cur, err := rep.FindCheck(ctx, l.HeadSHA, checks.Lock(l.Layer))
	if err != nil {
		return err
	}
	if cur != nil && cur.ID == l.CheckRunID && !cur.Completed() {
		return nil
	}
	id, err := rep.CreateCheck(ctx, lockCheck(w.d, l, l.HeadSHA))
	if err != nil {
		return err
	}
	return w.d.Store.SetLockCheck(ctx, l.Repo, l.Layer, l.PR, l.HeadSHA, id)
}

func cutRepo(full string) (owner, name string, ok bool) {
	for i := 0; i < len(full); i++ {
		if full[i] == '/' {
			return full[:i], full[i+1:], true
		}
	}
	return full, "", false
}
