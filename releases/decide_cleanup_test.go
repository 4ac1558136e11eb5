package releases

import (
	"errors"
	"testing"

	"strata.dev/strata/jobs"
)

// What a closed PR's cleanup says on the PR and returns to the queue for
// each thing it can find: a failed uninstall is retried without a word
// until the last attempt, which says so and still fails the job.
func TestCleanupOutcomeOf(t *testing.T) {
	a := jobs.ReleaseCleanup{PR: 7, Target: "api", Merged: true,
		Release: jobs.ReleaseSpec{ReleaseName: "api-pr-7", Namespace: "ci", Cluster: "ci"}}
	boom := errors.New("uninstall: timed out waiting for the condition\n")
	for _, tc := range []struct {
		name         string
		run          cleanupRun
		attempt, max int
		comment      string
		queueErr     error
	}{
		{"not installed", cleanupRun{Absent: true}, 1, 3, "", nil},
		{"installed by others too", cleanupRun{Foreign: true}, 1, 3, "Left Helm release `api-pr-7` in cluster `ci`, namespace `ci` installed: " +
			"its history has revisions this pull request did not write (another pull request, or someone outside Strata), " +
			"so it is not this pull request's to uninstall (`cleanup_on_close`).", nil},
		{"uninstalled", cleanupRun{}, 1, 3, "🧹 Uninstalled Helm release `api-pr-7` (release `api`) in cluster `ci`, namespace `ci`: the pull request was merged (`cleanup_on_close`).", nil},
		{"failed, attempts left", cleanupRun{Err: boom}, 2, 3, "", boom},
		{"failed at the last attempt", cleanupRun{Err: boom}, 3, 3, "⚠️ Could not uninstall Helm release `api-pr-7` (release `api`) in cluster `ci`, namespace `ci` after the pull request was merged:\n\n" +
			"```\nuninstall: timed out waiting for the condition\n```\nUninstall it by hand (`helm uninstall api-pr-7 -n ci`).", boom},
	} {
		out := cleanupOutcomeOf(a, "ci", tc.run, tc.attempt, tc.max)
		if out.Comment != tc.comment || out.Err != tc.queueErr {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, out.Comment, out.Err, tc.comment, tc.queueErr)
		}
	}
}
