package layers

import (
	"context"
	"errors"
	"fmt"

	"strata.dev/strata/checks"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// The I/O of the lock modes (lock: on_plan|on_apply); the decisions are in
// decide_lock.go.

// lockForPlan takes the layer's lock for a plan (on_plan), or only reads it
// (on_apply: a plan takes no lock). held is the lock as it was, nil when
// the plan took none and nobody holds it; acquired is false when another
// PR holds it.
func lockForPlan(ctx context.Context, st *store.Store, l config.Layer, want store.Lock) (held *store.Lock, acquired bool, err error) {
	if !l.LocksOnApply() {
		return st.TryLock(ctx, want)
	}
	cur, err := st.Lock(ctx, want.Repo, want.Layer)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, true, nil
	case err != nil:
		return nil, false, err
	}
	return cur, cur.PR == want.PR, nil
}

// blockedByApply is the summary of a plan that a lock taken by /apply
// blocked.
func blockedByApply(layer string, held *store.Lock, url string) string {
	return fmt.Sprintf("Layer %s locks on apply (`lock: on_apply`), and [#%d](%s) applied it (@%s, since %s): "+
		"#%d holds the lock until it is merged or closed, because the layer's real state now has changes that the "+
		"default branch does not. Nothing was planned.\n\n"+
		"Once #%d is merged or closed, or releases the lock with `/unlock %s`, comment `/plan %s` again "+
		"(update this branch first if it should include #%d's changes).",
		markdown.Quote(layer), held.PR, url, held.Holder, held.LockedAt.Format("2006-01-02 15:04 UTC"), held.PR, held.PR, layer, layer, held.PR)
}

// applyFactsOfLocks reads the locks and the last applies of the layers an
// /apply targets.
func applyFactsOfLocks(ctx context.Context, st *store.Store, repo string, layers []config.Layer, f *applyFacts) error {
	f.Locks, f.Applies = map[string]int{}, map[string]store.LayerApplied{}
	for _, l := range layers {
		last, err := st.LastApply(ctx, repo, l.Name)
		if err != nil {
			return err
		}
		f.Applies[l.Name] = last
		lock, err := st.Lock(ctx, repo, l.Name)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		f.Locks[l.Name] = lock.PR
	}
	return nil
}

// takeApplyLocks takes the locks of the on_apply layers an /apply is about
// to run, and shows them. When another PR took one since the decision, it
// drops those it took and says why the apply is refused.
func takeApplyLocks(ctx context.Context, d *worker.Deps, rep *report.Reporter, repo jobs.Repo, pr int, head, user string, layers []string) (string, error) {
	var taken []*store.Lock
	for _, name := range layers {
		held, ok, err := d.Store.TryLock(ctx, store.Lock{Repo: repo.FullName, Layer: name, PR: pr, HeadSHA: head,
			Holder: user, InstallationID: repo.InstallationID})
		if err != nil {
			return "", err
		}
		if !ok {
			for _, l := range taken {
				if err := d.Store.DropLock(ctx, repo.FullName, l.Layer, pr); err != nil {
					return "", err
				}
			}
			return lockedByApply(name, held.PR), nil
		}
		taken = append(taken, held)
	}
	for _, l := range taken {
		if err := showLock(ctx, d, rep, l, head); err != nil {
			return "", err
		}
	}
	return "", nil
}

// markOthersStale updates the plan checks of the other PRs' plans of a
// layer that this apply made stale (made at an older generation), on their
// PRs' current heads: they say so, with a Re-plan button instead of Apply.
func markOthersStale(ctx context.Context, d *worker.Deps, rep *report.Reporter, repo string, layer string) error {
	last, err := d.Store.LastApply(ctx, repo, layer)
	if err != nil {
		return err
	}
	plans, err := d.Store.UnappliedPlansOf(ctx, repo, layer)
	if err != nil {
		return err
	}
	lockedBy, err := lockHolder(ctx, d.Store, repo, layer)
	if err != nil {
		return err
	}
	var errs []error
	for _, p := range plans {
		if p.PR == last.PR || !planStale(p, last) {
			continue
		}
		if head, err := d.Store.PRHead(ctx, repo, p.PR); err != nil || (head != "" && head != p.HeadSHA) {
			errs = append(errs, err)
			continue
		}
		cur, err := rep.FindCheck(ctx, p.HeadSHA, checks.Plan(layer))
		if err != nil || cur == nil || !cur.Completed() {
			// A plan of it runs again, and reports for itself.
			errs = append(errs, err)
			continue
		}
		errs = append(errs, rep.UpdateCheck(ctx, cur.ID, staleCheck(d, repo, p, last, lockedBy)))
	}
	return errors.Join(errs...)
}

// staleCheck is a plan check whose plan an apply of another PR made stale;
// lockedBy is the PR holding the layer's lock (0 when free).
func staleCheck(d *worker.Deps, repo string, p *store.Plan, last store.LayerApplied, lockedBy int) report.Check {
	next := fmt.Sprintf("Comment `/plan %s` or press Re-plan to plan it again.", p.Layer)
	if lockedBy != 0 && lockedBy != p.PR {
		next = fmt.Sprintf("#%d holds the layer's lock until it is merged or closed; then comment `/plan %s` or press Re-plan "+
			"to plan it again (update this branch first if it should include #%d's changes).", lockedBy, p.Layer, lockedBy)
	}
	return report.Check{
		Name: checks.Plan(p.Layer), HeadSHA: p.HeadSHA, Conclusion: "failure", ExternalID: checks.ExternalID(p.PR),
		DetailsURL: d.PRURL(repo, last.PR),
		Title:      fmt.Sprintf("Stale: #%d applied this layer", last.PR),
		Summary: fmt.Sprintf("#%d applied %s at %s, after this plan was made: the layer's state moved under it, so this "+
			"plan cannot be applied.\n\n%s\n\nThe stale plan was: %s", last.PR, markdown.Quote(p.Layer), last.AppliedAt.Format("2006-01-02 15:04 UTC"),
			next, p.Summary),
		Actions: applyActions,
	}
}

// staleOnSave is the check of a plan saved after an apply of another PR
// (which took the slot as the plan released it) made it stale, or nil when
// the plan is current.
func staleOnSave(ctx context.Context, d *worker.Deps, p *store.Plan) (*report.Check, error) {
	last, err := d.Store.LastApply(ctx, p.Repo, p.Layer)
	if err != nil || !planStale(p, last) {
		return nil, err
	}
	lockedBy, err := lockHolder(ctx, d.Store, p.Repo, p.Layer)
	if err != nil {
		return nil, err
	}
	c := staleCheck(d, p.Repo, p, last, lockedBy)
	return &c, nil
}

// lockHolder is the PR holding the layer's lock, 0 when it is free.
func lockHolder(ctx context.Context, st *store.Store, repo, layer string) (int, error) {
	l, err := st.Lock(ctx, repo, layer)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, err
	}
	return l.PR, nil
}

// onApplyNote tells a plan of an on_apply layer what its plan check does
// not show: that others may plan the layer too.
const onApplyNote = "\nThis layer locks on apply (`lock: on_apply`): this plan took no lock, and other pull requests " +
	"can plan the layer too. The first `/apply` takes the lock until its pull request is merged or closed; " +
	"an apply of another pull request before yours makes this plan stale.\n"
