package syncs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// defaultRepinInterval is used when the server config sets none.
const defaultRepinInterval = 5 * time.Minute

// repinPeriodic re-resolves the pinned images every repin_interval (not at
// start, as it always was).
func repinPeriodic(every time.Duration) worker.Periodic {
	return worker.Periodic{ID: "sync_repin", Every: every, Args: jobs.SyncRepin{}}
}

// syncRepinWorker re-resolves the images each sync pinned to digests at its
// last hydration from the default branch; a sync whose tag now points at
// another digest is hydrated again from the same commit.
type syncRepinWorker struct {
	river.WorkerDefaults[jobs.SyncRepin]
	d *worker.Deps
}

func (w *syncRepinWorker) Timeout(*river.Job[jobs.SyncRepin]) time.Duration {
	return jobs.SyncRepinTimeout
}

func (w *syncRepinWorker) Work(ctx context.Context, job *river.Job[jobs.SyncRepin]) error {
	d := w.d
	syncs, err := d.Store.PinnedSyncs(ctx)
	if err != nil {
		return err
	}
	err = worker.Each(ctx, syncs, w.repin)
	// The periodic job also finishes the takeover endings no job retries any
	// more, so that no hand-back is lost (see sweepEndings).
	return errors.Join(err, sweepEndings(ctx, d))
}

func (w *syncRepinWorker) repin(ctx context.Context, h *store.SyncHydration) error {
	d := w.d
	if _, err := d.Store.Takeover(ctx, h.Repo, h.Sync); err == nil {
		return nil // a takeover's end hydrates the default branch, with fresh digests
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	var spec jobs.SyncSpec
	if err := json.Unmarshal([]byte(h.Spec), &spec); err != nil {
		return fmt.Errorf("sync %s %s: %w", h.Repo, h.Sync, err)
	}
	pinned := make([]hydrate.PinnedImage, 0, len(h.Pinned))
	was := map[string]string{}
	for _, p := range h.Pinned {
		pinned = append(pinned, hydrate.PinnedImage{Name: p.Name, Tag: p.Tag, Digest: p.Digest})
		was[p.Name+":"+p.Tag] = p.Digest
	}
	moved, rerr := hydrate.RepinImages(ctx, pinned, imageResolver)
	if rerr != nil {
		d.Logger.Warn().Err(rerr).Str("repo", h.Repo).Str("sync", h.Sync).Msg("re-resolving pinned images")
	}
	if len(moved) == 0 {
		return nil
	}
	var notes []string
	for _, m := range moved {
		notes = append(notes, fmt.Sprintf("%s:%s moved to %s (was %s)", m.Name, m.Tag, m.Digest, was[m.Name+":"+m.Tag]))
	}
	owner, name, _ := strings.Cut(h.Repo, "/")
	_, err := d.Queue.Enqueue(ctx, jobs.SyncHydrate{Repo: jobs.NewRepo(h.InstallationID, owner, name), Target: h.Sync,
		HeadSHA: h.SourceCommit, Sync: spec, Reason: jobs.HydrateRepin, Note: strings.Join(notes, "; ")}, nil)
	return err
}

// sweepEndings settles the takeovers that the jobs meant to end them left:
// endings whose job's attempts ran out (or that nothing retries), and
// takeovers whose expiry job failed for good (or was never scheduled, when
// /takeover failed after claiming the sync), which would hold their sync
// forever. Only those older than an ending job's timeout, so that it does
// not race a job still at work.
func sweepEndings(ctx context.Context, d *worker.Deps) error {
	before := d.Now().Add(-jobs.TakeoverEndTimeout)
	left, err := d.Store.TakeoverEndings(ctx, "", 0, before)
	if err != nil {
		return err
	}
	overdue, err := d.Store.OverdueTakeovers(ctx, before)
	if err != nil {
		return err
	}
	var errs []error
	for _, t := range append(left, overdue...) {
		in, err := scopeOf(d, t)
		if err == nil {
			err = settle(ctx, d, in, t, "")
		}
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
