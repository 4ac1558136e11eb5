package layers

import (
	"time"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/store"
)

// Drift detection's decisions, as pure functions of facts; drift.go reads
// the facts and does what they say.

// driftWanted are the layers of the default branch's config that ask for
// drift detection, with their schedules. cfg is nil without a file: drift
// is only ever asked for in .strata.yaml.
func driftWanted(cfg *config.Repo) []store.DriftWanted {
	if cfg == nil {
		return nil
	}
	var out []store.DriftWanted
	for _, l := range cfg.Layers {
		if l.Drift.On() {
			out = append(out, store.DriftWanted{Layer: l.Name, Schedule: l.Drift.Schedule})
		}
	}
	return out
}

// driftStep is what a scan does with a layer that is due.
type driftStep string

const (
	// driftEnqueue: run it now; it is due next at the schedule's next time.
	driftEnqueue driftStep = "enqueue"
	// driftSkipLocked: a PR holds the layer's lock (its plan is not
	// applied yet, so the default branch is not the truth to compare
	// with); it stays due and the next scan tries again.
	driftSkipLocked driftStep = "skip: locked"
	// driftForget: the stored schedule no longer parses (a newer server
	// reads it differently); the next push to the default branch sets it
	// again.
	driftForget driftStep = "forget"
)

// driftStepOf decides for a due layer; lock is its lock, nil when free.
func driftStepOf(l *store.DriftLayer, lock *store.Lock, now time.Time) (driftStep, time.Time) {
	if lock != nil {
		return driftSkipLocked, time.Time{}
	}
	d, err := config.ParseDriftSchedule(l.Schedule)
	if err != nil {
		return driftForget, time.Time{}
	}
	return driftEnqueue, d.Next(now)
}

// driftStateOf names what a finished plan of the default branch found:
// outcome is planOutcomeOf's for the run.
func driftStateOf(outcome planOutcome, res *terraform.PlanResult) string {
	switch {
	case outcome != planPlanned || res == nil:
		return store.DriftFailed
	case res.HasChanges:
		return store.DriftDrifted
	}
	return store.DriftClean
}

// issueStep is what a drift run does with the layer's issue.
type issueStep string

const (
	issueNone   issueStep = "none"
	issueOpen   issueStep = "open"   // a new issue reports the drift
	issueUpdate issueStep = "update" // the open issue gets this run's report
	issueClose  issueStep = "close"  // the drift is gone: say so and close it
	issueForget issueStep = "forget" // closed by someone: nothing to close
)

// issueStepOf decides from the run's state, the issue the store remembers
// (0 for none) and whether it is still open on GitHub. A failed run leaves
// the issue as it is: it says nothing of the drift.
func issueStepOf(state string, issue int, open bool) issueStep {
	switch state {
	case store.DriftDrifted:
		if issue != 0 && open {
			return issueUpdate
		}
		return issueOpen
	case store.DriftClean:
		switch {
		case issue == 0:
			return issueNone
		case open:
			return issueClose
		}
		return issueForget
	}
	return issueNone
}

// driftFound is what a drift run found before it plans, up to the first
// fact that decides its start, in the order it looks.
type driftFound struct {
	Stopped bool        // the default branch no longer asks for the layer's drift (no schedule stored)
	Issue   int         // the layer's drift issue the store remembers, 0 for none
	Lock    *store.Lock // a PR holds the layer's lock; nil: free
	// SHA and Branch are the default branch's head.
	SHA, Branch string
	ConfigErr   error // the default branch's .strata.yaml does not parse
	// Layer is the layer in that file; Asks: it is there and asks for
	// drift detection.
	Layer config.Layer
	Asks  bool
}

// driftStart is what a drift run does before planning.
type driftStart string

const (
	driftStopped   driftStart = "stopped"    // nothing: the default branch stopped asking
	driftLocked    driftStart = "locked"     // due again for the next scan (driftSkipLocked's reason)
	driftBadConfig driftStart = "bad config" // a failed run is reported: the file does not parse
	driftGone      driftStart = "gone"       // the stored schedule is forgotten: the file no longer asks
	driftPlan      driftStart = "plan"       // plan the default branch's head
)

// driftStartOf decides whether a drift run plans the layer.
func driftStartOf(f driftFound) driftStart {
	switch {
	case f.Stopped:
		return driftStopped
	case f.Lock != nil:
		return driftLocked
	case f.ConfigErr != nil:
		return driftBadConfig
	case !f.Asks:
		return driftGone
	}
	return driftPlan
}
