package releases

import (
	"strings"

	"strata.dev/strata/engine/helm"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
)

// releaseRun is what a /helm-test run found, up to the first fact that
// ends it, in the order it looks.
type releaseRun struct {
	NotStarted error        // the release's slot or the PR could not be had: nothing ran
	Closed     bool         // the PR closed while the run waited: nothing ran
	Res        *helm.Report // what the engine reported, redacted; nil if it reported nothing
	Err        error        // what stopped the engine
}

// releaseOutcome is what a /helm-test run does about what it found: it
// completes the check once.
type releaseOutcome struct {
	Check report.Check
	// Err is returned to the queue, and the check's own error is then
	// only logged; without Err the check's error is the job's.
	Err error
}

// releaseOutcomeOf decides how a /helm-test run's check completes.
func releaseOutcomeOf(a jobs.ReleaseTest, r releaseRun) releaseOutcome {
	switch {
	case r.NotStarted != nil:
		return releaseOutcome{Err: r.NotStarted, Check: report.Check{Conclusion: "failure", Title: "Helm test did not start",
			Summary: markdown.Block("", r.NotStarted.Error()), Actions: helmTestActions}}
	case r.Closed:
		// Its cleanup may already have uninstalled the release.
		return releaseOutcome{Check: report.Check{Conclusion: "cancelled", Title: "Cancelled", Summary: "Not tested: the pull request is closed."}}
	case r.Err != nil:
		summary := "**Strata could not carry out the Helm test:**\n\n" + markdown.Block("", strings.TrimSpace(r.Err.Error()))
		if r.Res != nil {
			summary += "\n" + r.Res.Markdown(report.MaxCheckOutput-len(summary)-200)
		}
		return releaseOutcome{Check: report.Check{Conclusion: "failure", Title: "Helm test could not run", Summary: summary, Actions: helmTestActions}}
	}
	return releaseOutcome{Check: releaseCheck(a, r.Res)}
}
