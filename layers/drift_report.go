package layers

import (
	"fmt"
	"strings"
	"time"

	"strata.dev/strata/checks"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
)

// driftMarker tags a drift issue with its layer, for people and searches.
func driftMarker(layer string) string { return "<!-- strata:drift " + layer + " -->" }

// driftIssueTitle names the layer; one issue per drifted layer.
func driftIssueTitle(layer string) string { return "Drift detected in layer " + layer }

// driftRun is what one drift run of a layer found, for its reports.
type driftRun struct {
	Repo   string
	Layer  string
	Branch string
	SHA    string
	At     time.Time
	State  string
	Result *terraform.PlanResult // nil when it failed
	Err    error
	LogURL string
	Issue  int // the issue reporting the drift, 0 for none
}

// driftCheck is the `strata/drift: LAYER` check on the default branch's head.
func driftCheck(r driftRun) report.Check {
	c := report.Check{Name: checks.Drift(r.Layer), HeadSHA: r.SHA, LogURL: r.LogURL, DetailsURL: r.LogURL}
	switch r.State {
	case store.DriftClean:
		c.Conclusion, c.Title = "success", "No drift"
		c.Summary = fmt.Sprintf("Planned %s on %s at %s: the real world matches the code.\n", markdown.Quote(r.Layer), markdown.Quote(r.Branch), r.SHA)
	case store.DriftDrifted:
		// A drifted layer is a failure: someone has to act (apply the
		// branch again, or change the code to match the world).
		c.Conclusion, c.Title = "failure", "Drifted: "+r.Result.Summary()
		c.Summary = driftReport(r)
		c.Text = markdown.Block("", r.Result.Text)
	default:
		f := failedCheck(c.Name, r.SHA, 0, r.Err, r.LogURL, nil)
		c.Conclusion, c.Title, c.Summary = f.Conclusion, "Drift check failed: "+f.Title, f.Summary
	}
	return c
}

// driftReport is the drift as the check's summary and the issue's body
// say it: the counts, what would be replaced or destroyed, every changed
// address, and what to do.
func driftReport(r driftRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Strata planned layer %s on %s at %s (%s) and the plan is not empty: "+
		"the real world no longer matches the code.\n\n", markdown.Quote(r.Layer), markdown.Quote(r.Branch), r.SHA, r.At.UTC().Format(time.RFC3339))
	b.WriteString(r.Result.MarkdownSummary())
	fmt.Fprintf(&b, "\nTo fix it, apply %s again through a pull request (`/plan`, then `/apply`), "+
		"or change the code to match the world.", markdown.Quote(r.Layer))
	if r.LogURL != "" {
		fmt.Fprintf(&b, " Full log: %s", r.LogURL)
	}
	b.WriteString("\n")
	return b.String()
}

// driftIssueBody is the issue's body: the latest drifted run's report with
// its plan folded away.
func driftIssueBody(r driftRun) string {
	var b strings.Builder
	b.WriteString(driftMarker(r.Layer) + "\n")
	b.WriteString(driftReport(r))
	// Room for the plan within GitHub's limit, after the report.
	room := report.MaxCommentRunes - 2000 - len(b.String())
	b.WriteString("\n<details><summary>Plan</summary>\n\n")
	b.WriteString(markdown.Cut(markdown.Block("", r.Result.Text), max(room, 0), "\n\n… plan cut to fit; see the full log"))
	b.WriteString("\n</details>\n\nThis issue is updated on each drift run that finds drift, and closed by the first run that finds none.\n")
	return b.String()
}

// driftStillComment is added to the open issue on each later drifted run.
func driftStillComment(r driftRun) string {
	return fmt.Sprintf("Still drifted at %s (%s): %s\n\n%s", r.SHA, r.At.UTC().Format(time.RFC3339),
		r.Result.Summary(), r.Result.MarkdownSummary())
}

// driftGoneComment closes the issue.
func driftGoneComment(r driftRun) string {
	return fmt.Sprintf("No drift any more: Strata planned %s on %s at %s (%s) and the plan is empty. Closing.",
		markdown.Quote(r.Layer), markdown.Quote(r.Branch), r.SHA, r.At.UTC().Format(time.RFC3339))
}
