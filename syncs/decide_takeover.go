package syncs

import (
	"errors"
	"fmt"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
)

// takeoverRun is what hydrating a takeover's head gave, up to the first
// fact that ends it, in the order it happens.
type takeoverRun struct {
	BuildErr  error  // the build failed: on the PR's files (*hydrate.Error) or otherwise
	CommitErr error  // the commit into the destination failed
	Skipped   bool   // not committed: the takeover ended or moved on meanwhile
	Summary   string // what was hydrated (hydrateReport)
}

// takeoverOutcome is what a takeover's hydration does about what it found:
// it puts Note on the takeover's check, above what the check says, and
// returns Err to the queue (the check's own failure is then only logged).
type takeoverOutcome struct {
	Note string // "" leaves the check as it is
	Err  error
}

// takeoverOutcomeOf decides what a takeover's check is told and the queue
// hears. A build that fails on the PR's files is the PR's to fix: the check
// says why and the job ends; any other failure is retried by a push or a
// /takeover, which the check says.
func takeoverOutcomeOf(a jobs.SyncTakeover, r takeoverRun) takeoverOutcome {
	var bad *hydrate.Error
	switch {
	case errors.As(r.BuildErr, &bad):
		return takeoverOutcome{Note: buildFailure(a.Target, a.HeadSHA, bad)}
	case r.BuildErr != nil:
		return takeoverFailed(a, r.BuildErr)
	case r.CommitErr != nil:
		return takeoverFailed(a, r.CommitErr)
	case r.Skipped:
		return takeoverOutcome{}
	}
	return takeoverOutcome{Note: r.Summary}
}

func takeoverFailed(a jobs.SyncTakeover, err error) takeoverOutcome {
	return takeoverOutcome{Err: err, Note: fmt.Sprintf("Hydrating %s failed: %s. Push again or comment `/takeover %s` to retry.",
		report.Short(a.HeadSHA), markdown.Quote(fmt.Sprint(err)), a.Target)}
}
