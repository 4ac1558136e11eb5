package worker

import (
	"context"
	"time"

	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
)

// pruneEvery is how often housekeeping runs; at start too, so that a
// server that restarts often still prunes.
const pruneEvery = time.Hour

// Housekeeping is the runtime's own feature: it keeps the database and the
// source cache from growing forever. Records older than the server's
// retention (Config.Retention) are deleted (store.Prune says which), and the
// source cache of the replica that runs the job is pruned to its bounds
// (every replica also prunes its own on each download).
func Housekeeping(d *Deps) Feature {
	return Feature{
		Name:       "housekeeping",
		Periodic:   []Periodic{{ID: "prune", Every: pruneEvery, AtStart: true, Args: jobs.Prune{}}},
		AddWorkers: func(w *river.Workers) { river.AddWorker(w, &pruneWorker{d: d}) },
	}
}

type pruneWorker struct {
	river.WorkerDefaults[jobs.Prune]
	d *Deps
}

func (w *pruneWorker) Timeout(*river.Job[jobs.Prune]) time.Duration { return jobs.PruneTimeout }

func (w *pruneWorker) Work(ctx context.Context, job *river.Job[jobs.Prune]) error {
	retention := w.d.Config.Retention
	if retention <= 0 {
		retention = config.DefaultRetention
	}
	pruned, err := w.d.Store.Prune(ctx, w.d.Now().Add(-retention))
	if err != nil {
		return err
	}
	zerolog.Ctx(ctx).Info().Int64("deliveries", pruned.Deliveries).Int64("runs", pruned.Runs).
		Int64("plan_batches", pruned.Batches).Dur("retention", retention).Msg("pruned old records")
	if w.d.Fetcher == nil {
		return nil
	}
	return w.d.Fetcher.Prune()
}
