package releases

import (
	"errors"
	"strings"
	"testing"

	"strata.dev/strata/engine/helm"
	"strata.dev/strata/jobs"
)

// What a /helm-test run's check says for each way the run ends, and which
// runs return an error to the queue.
func TestReleaseOutcomeOf(t *testing.T) {
	a := jobs.ReleaseTest{Target: "api", HeadSHA: "abc123", User: "alice",
		Release: jobs.ReleaseSpec{ReleaseName: "api-pr-2", Namespace: "ci", Cluster: "ci"}}
	passed := &helm.Report{Action: "upgrade", Revision: 3, Hooks: []helm.HookResult{{Name: "api-test", Phase: helm.PhaseSucceeded}}}
	failed := &helm.Report{Action: "upgrade", Revision: 4, Hooks: []helm.HookResult{{Name: "api-test", Phase: helm.PhaseFailed, Cause: helm.CauseFailed}}}
	slot := errors.New("context deadline exceeded")
	for _, tc := range []struct {
		name                       string
		run                        releaseRun
		conclusion, title, summary string // summary: its start
		queueErr                   error
	}{
		{"slot not had", releaseRun{NotStarted: slot}, "failure", "Helm test did not start", "```\ncontext deadline exceeded\n```\n", slot},
		{"closed while waiting", releaseRun{Closed: true}, "cancelled", "Cancelled", "Not tested: the pull request is closed.", nil},
		{"engine failed, no report", releaseRun{Err: errors.New("cluster \"ci\" is no longer in the server config\n")}, "failure", "Helm test could not run",
			"**Strata could not carry out the Helm test:**\n\n```\ncluster \"ci\" is no longer in the server config\n```\n", nil},
		{"engine failed after a report", releaseRun{Err: errors.New("timed out"), Res: failed}, "failure", "Helm test could not run",
			"**Strata could not carry out the Helm test:**\n\n```\ntimed out\n```\n\n", nil},
		{"passed", releaseRun{Res: passed}, "success", "Passed: 1 test at revision 3", "", nil},
		{"failed", releaseRun{Res: failed}, "failure", "Failed: api-test failed", "", nil},
	} {
		out := releaseOutcomeOf(a, tc.run)
		c := out.Check
		if c.Conclusion != tc.conclusion || c.Title != tc.title || !strings.HasPrefix(c.Summary, tc.summary) || out.Err != tc.queueErr {
			t.Errorf("%s: %q %q %q, %v; want %q %q %q…, %v", tc.name, c.Conclusion, c.Title, c.Summary, out.Err, tc.conclusion, tc.title, tc.summary, tc.queueErr)
		}
		if c.Status != "" {
			t.Errorf("%s: status %q; want a completed check", tc.name, c.Status)
		}
	}
}
