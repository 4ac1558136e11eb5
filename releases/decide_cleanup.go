package releases

import (
	"fmt"
	"strings"

	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/worker"
)

// cleanupRun is what a closed PR's cleanup found about its release, up to
// the first fact that ends it, in the order it looks.
type cleanupRun struct {
	Absent  bool  // not installed: never, or cleaned up already
	Foreign bool  // its history has revisions this PR did not write: not uninstalled
	Err     error // what the uninstall returned
}

// cleanupOutcome is what a cleanup does about what it found: it tells the
// PR once, and returns Err to the queue.
type cleanupOutcome struct {
	Comment string // "" tells the PR nothing
	Err     error
}

// cleanupOutcomeOf decides what a cleanup of a release in cluster says on
// the PR and tells the queue. A failed uninstall is retried silently while
// the job has attempts left; the last one says so, and how to do it by
// hand.
func cleanupOutcomeOf(a jobs.ReleaseCleanup, cluster string, r cleanupRun, attempt, maxAttempts int) cleanupOutcome {
	rel := a.Release
	switch {
	case r.Absent:
		return cleanupOutcome{}
	case r.Foreign:
		return cleanupOutcome{Comment: fmt.Sprintf("Left Helm release %s in cluster %s, namespace %s installed: "+
			"its history has revisions this pull request did not write (another pull request, or someone outside Strata), "+
			"so it is not this pull request's to uninstall (`cleanup_on_close`).", markdown.Quote(rel.ReleaseName), markdown.Quote(cluster), markdown.Quote(rel.Namespace))}
	case r.Err != nil && attempt < maxAttempts:
		return cleanupOutcome{Err: r.Err}
	}
	why := worker.ClosedWhy(a.Merged)
	where := fmt.Sprintf("Helm release %s (release %s) in cluster %s, namespace %s", markdown.Quote(rel.ReleaseName), markdown.Quote(a.Target), markdown.Quote(cluster), markdown.Quote(rel.Namespace))
	if r.Err != nil {
		return cleanupOutcome{Err: r.Err, Comment: fmt.Sprintf("⚠️ Could not uninstall %s after %s:\n\n%sUninstall it by hand (`helm uninstall %s -n %s`).",
			where, why, markdown.Block("", strings.TrimSpace(r.Err.Error())), rel.ReleaseName, rel.Namespace)}
	}
	return cleanupOutcome{Comment: fmt.Sprintf("🧹 Uninstalled %s: %s (`cleanup_on_close`).", where, why)}
}
