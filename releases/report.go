package releases

import (
	"fmt"

	"strata.dev/strata/engine/helm"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/words"
)

// releaseCheck is a completed Helm test as its check shows it: the engine's
// report (table, cause, logs, revision, versions, values digest) and how to
// run it again.
func releaseCheck(a jobs.ReleaseTest, r *helm.Report) report.Check {
	footer := fmt.Sprintf("\n---\nTested at %s for @%s in cluster %s. Press Re-run or comment `/helm-test %s` to test again.\n",
		a.HeadSHA, a.User, markdown.Quote(a.Release.Cluster), a.Target)
	c := report.Check{
		Conclusion: "success",
		Title:      fmt.Sprintf("Passed: %d %s at revision %d", len(r.Hooks), words.Plural(len(r.Hooks), "test", "tests"), r.Revision),
		Summary:    r.Markdown(report.MaxCheckOutput-len(footer)) + footer,
		Actions:    helmTestActions,
	}
	if !r.Passed() {
		c.Conclusion, c.Title = "failure", "Failed: "+failure(r)
	}
	if m := r.Remediation; m != nil {
		switch {
		case m.Err != "":
			c.Title += "; " + m.Action + " failed"
		case m.Action == "rollback":
			c.Title += fmt.Sprintf("; rolled back to revision %d", m.ToRevision)
		default:
			c.Title += "; uninstalled"
		}
	}
	return c
}

// failure says in a few words what failed: the upgrade, or which hook.
func failure(r *helm.Report) string {
	if r.UpgradeErr != "" {
		return fmt.Sprintf("the %s %s", r.Action, r.UpgradeCause)
	}
	for _, h := range r.Hooks {
		if h.Cause != helm.CauseNone {
			return fmt.Sprintf("%s %s", h.Name, h.Cause)
		}
	}
	return "the test run " + string(r.Cause())
}
