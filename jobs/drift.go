package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// DriftScan finds the drift layers that are due (the store says when) and
// enqueues a DriftRun for each; a periodic job.
type DriftScan struct{}

func (DriftScan) Kind() string { return "drift_scan" }

// InsertOpts: a scan only reads the store and enqueues, so it may retry.
func (DriftScan) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 3} }

// DriftDiscover reads .strata.yaml on the default branch of every
// repository the App is installed on, and stores which layers ask for
// drift detection; a periodic job (pushes to a default branch do the same
// for their repository at once).
type DriftDiscover struct{}

func (DriftDiscover) Kind() string { return "drift_discover" }

// InsertOpts: discovery only reads and stores, so it may retry.
func (DriftDiscover) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 3} }

// DriftRun plans one layer at its default branch's head and reports drift.
// It only plans (the state lock aside), so a run whose process died is
// retried.
type DriftRun struct {
	Repo
	Target string `json:"target"` // the layer's name
}

func (DriftRun) Kind() string { return "drift_run" }

// InsertOpts: one run per layer at a time: a layer still queued or running
// is not enqueued again by the next scan.
func (DriftRun) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Runs, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: untilDone}}
}

// Timeouts of drift jobs: a run is a plan, waiting for the layer's slot
// included.
const (
	DriftScanTimeout     = 5 * time.Minute
	DriftDiscoverTimeout = 30 * time.Minute
	DriftRunTimeout      = LayerPlanTimeout
)
