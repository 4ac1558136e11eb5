package syncs

import (
	"fmt"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
)

// hydration is what a hydration job found, up to the first fact that ends
// it (hydrateSync), in the order it looks.
type hydration struct {
	Takeover    *store.Takeover // the sync is taken over: nothing was built
	TakeoverURL string          // the page of the PR holding it
	Build       *hydrate.Error  // kustomize refused the source: nothing was committed
	Valid       *validated      // the output's validation, nil before it ran; Block: nothing was committed
	NoBranch    bool            // the staging branch's dest.branch does not exist: nothing was committed
	Skipped     string          // why the guard wrote nothing (a takeover since, a newer source commit)
	// Title and Summary report a hydration done: committed, or already
	// held, recorded and promoted.
	Title, Summary string
	// Err is what stopped the hydration otherwise: the job is retried,
	// and the check fails on the LastAttempt.
	Err         error
	LastAttempt bool
}

// hydrateOutcome is what a hydration job does about what it found.
type hydrateOutcome struct {
	// Conclusion, Title and Summary complete the check; no Conclusion
	// leaves it in progress for the retry.
	Conclusion, Title, Summary string
	// RecordFailed records the source commit as one that does not hydrate.
	RecordFailed bool
	// Tell follows "The takeover of SYNC by #N ended (why), " on the PR
	// whose takeover's end this hydration is (jobs.HydrateRelease); "" says
	// nothing.
	Tell string
	// Err is returned to the queue, which retries the job or fails it.
	Err error
}

// hydrateOutcomeOf decides what a hydration's check says and what the PR
// whose takeover ended is told. The validation, once it ran, changes a
// success into its own conclusion and follows every summary but its own
// block's; the PR is told the summary without it.
func hydrateOutcomeOf(a jobs.SyncHydrate, h hydration) hydrateOutcome {
	var out hydrateOutcome
	switch {
	case h.Takeover != nil:
		out = hydrateOutcome{Conclusion: "neutral", Title: pausedTitle(h.Takeover), Summary: pausedSummary(h.Takeover, h.TakeoverURL),
			// Taken over again before the hand-back ran: that takeover's end hydrates it.
			Tell: fmt.Sprintf("but #%d took it over before Strata rehydrated it from the default branch; "+
				"the default branch's head is hydrated into it when that takeover ends.", h.Takeover.PR)}
	case h.Build != nil:
		out = hydrateOutcome{Conclusion: "failure", Title: "kustomize build failed", Summary: buildFailure(a.Target, a.HeadSHA, h.Build), RecordFailed: true,
			Tell: fmt.Sprintf("but hydrating %s at %s failed; nothing was committed:\n\n%s",
				markdown.Quote(a.Sync.DestBranch), report.Short(a.HeadSHA), markdown.Block("", h.Build.Error()))}
	case h.Err != nil:
		out.Err = h.Err
		if !h.LastAttempt {
			return out
		}
		out.Conclusion, out.Title, out.Summary = "failure", "Hydration failed", "Strata could not hydrate this sync:\n\n"+markdown.Block("", h.Err.Error())
	case h.Valid != nil && h.Valid.Block:
		return hydrateOutcome{Conclusion: "failure", Title: h.Valid.Title + ": not hydrated", Summary: h.Valid.Text, RecordFailed: true}
	case h.NoBranch:
		out = hydrateOutcome{Conclusion: "failure", Title: "No branch to promote into", Summary: noPromotionBase(a)}
	case h.Skipped != "":
		note := fmt.Sprintf("%s was not hydrated from %s: %s.", markdown.Quote(a.Target), report.Short(a.HeadSHA), h.Skipped)
		out = hydrateOutcome{Conclusion: "neutral", Title: "Not hydrated", Summary: note, Tell: "but " + note}
	default:
		summary := h.Summary
		if a.Note != "" {
			summary = a.Note + "\n\n" + summary
		}
		out = hydrateOutcome{Conclusion: "success", Title: h.Title, Summary: summary,
			Tell: "and Strata rehydrated it from the default branch:\n\n" + summary}
	}
	if h.Valid != nil {
		out.Conclusion, out.Title, out.Summary = h.Valid.apply(out.Conclusion, out.Title, out.Summary)
	}
	if a.Reason != jobs.HydrateRelease {
		out.Tell = ""
	}
	return out
}
