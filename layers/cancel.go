package layers

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"strata.dev/strata/command"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/words"
	"strata.dev/strata/worker"
)

// cancelCommand answers /cancel: it records that the user cancelled the
// PR's queued and running plans, which their jobs read before they start
// and, while Terraform runs, every half second (watchPlan): Terraform is
// interrupted, then killed after the grace period, and each plan's check
// completes as cancelled. An apply that started is never touched, and the
// locks stay: /unlock releases them.
func cancelCommand(ctx context.Context, d *worker.Deps, c *worker.CommandContext, _ command.Command) error {
	a := c.Job
	cancelled, err := d.Store.CancelPlans(ctx, a.FullName, a.PR, a.User)
	if err != nil {
		return err
	}
	applying, err := d.Store.RunningRuns(ctx, a.FullName, a.PR, jobs.LayerApply{}.Kind())
	if err != nil {
		return err
	}
	var plans, applies []string
	for _, p := range cancelled {
		plans = appendNew(plans, p.Layer)
	}
	for _, r := range applying {
		applies = appendNew(applies, r.Target)
	}
	return c.Reply(ctx, cancelReply(a.User, plans, applies))
}

// cancelReply says what a /cancel cancelled, and which applies go on.
func cancelReply(user string, plans, applies []string) string {
	var b strings.Builder
	if len(plans) == 0 {
		fmt.Fprintf(&b, "@%s this pull request has no queued or running plan to cancel.", user)
	} else {
		fmt.Fprintf(&b, "@%s cancelled the queued and running %s of this pull request:\n\n", user, words.Plural(len(plans), "plan", "plans"))
		for _, l := range plans {
			fmt.Fprintf(&b, "- %s\n", markdown.Quote(l))
		}
		b.WriteString("\nTheir checks complete as cancelled. The locks stay: `/unlock` releases them, `/plan` plans again.")
	}
	if len(applies) > 0 {
		fmt.Fprintf(&b, "\n\nNot cancelled: the %s of %s, which started. An apply that started is never interrupted.",
			words.Plural(len(applies), "apply", "applies"), report.Names(applies))
	}
	return b.String()
}

func appendNew(names []string, name string) []string {
	if slices.Contains(names, name) {
		return names
	}
	return append(names, name)
}
