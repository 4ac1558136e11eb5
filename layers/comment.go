package layers

import (
	"fmt"
	"strings"

	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/report"
	"strata.dev/strata/words"
)

// layerOutcome is what a layer's part of a plan comment reports.
type layerOutcome int

const (
	// layerChanged: planned with changes, to apply or unlock.
	layerChanged layerOutcome = iota
	// layerUnchanged: planned, nothing to do.
	layerUnchanged
	// layerBlocked: another pull request holds the lock; nothing ran.
	layerBlocked
	// layerCancelled: the plan did not run or was stopped.
	layerCancelled
	// layerFailed: Terraform or Strata failed; no plan.
	layerFailed
)

func (r layerReport) outcome() layerOutcome {
	switch {
	case r.BlockedBy > 0:
		return layerBlocked
	case r.Cancelled:
		return layerCancelled
	case r.Error != "" || r.Result == nil:
		return layerFailed
	case r.Result.HasChanges:
		return layerChanged
	default:
		return layerUnchanged
	}
}

// planComment renders the plans of one command, several layers, as one
// comment of at most markdown.MaxBytes. Each layer says where it was planned
// and what to do next. A layer with changes is a collapsible <details> whose
// summary line holds the "Plan:" counts (and a ⚠️ when something is replaced
// or destroyed), then the lists of MarkdownSummary and the plan text in a
// diff fence; a layer without changes is one line. When the comment would be
// too long, the plan texts are cut, each given an equal share of the room (a
// short one leaves its unused share to others).
func planComment(layers []layerReport) string {
	return planCommentWithin(layers, markdown.MaxBytes)
}

func planCommentWithin(layers []layerReport, limit int) string {
	texts := make([]string, len(layers))
	for i, l := range layers {
		if l.outcome() == layerChanged {
			texts[i] = terraform.DiffText(withoutPlanLine(l.Result.Text))
		}
	}
	// The room left once everything but the plan texts is rendered (a
	// one-byte stand-in keeps each text's fence in the count).
	standIns := make([]string, len(texts))
	for i, t := range texts {
		if t != "" {
			standIns[i] = "x"
		}
	}
	budgets := markdown.ShareRoom(texts, limit-len(renderPlans(layers, standIns)))
	for i, t := range texts {
		note := "… plan cut to fit in a comment"
		if layers[i].LogURL != "" {
			note += "; see the full log"
		}
		texts[i] = terraform.Truncate(t, budgets[i], note)
	}
	// Only error messages, which are not cut above, can still be too long.
	return markdown.Cut(renderPlans(layers, texts), limit, "\n\n… comment cut to fit")
}

func renderPlans(layers []layerReport, texts []string) string {
	var b strings.Builder
	failed, changed := 0, 0
	for _, l := range layers {
		switch l.outcome() {
		case layerChanged:
			changed++
		case layerUnchanged:
		default:
			failed++
		}
	}
	fmt.Fprintf(&b, "**Terraform plan:** %d %s, %d with changes", len(layers), words.Plural(len(layers), "layer", "layers"), changed)
	if failed > 0 {
		fmt.Fprintf(&b, ", %d failed", failed)
	}
	b.WriteString("\n")
	for i, l := range layers {
		b.WriteString("\n")
		renderPlan(&b, l, texts[i])
	}
	if changed > 1 {
		b.WriteString("\nTo apply them all at once: `/apply` applies every layer this pull request has a plan of.\n")
	}
	return b.String()
}

func renderPlan(b *strings.Builder, l layerReport, text string) {
	switch l.outcome() {
	case layerUnchanged:
		fmt.Fprintf(b, "✅ **%s**%s: no changes.\n", l.Layer, l.place(mdCode))
		return
	case layerChanged:
		r := l.Result
		warn := ""
		if len(r.Replaced)+len(r.Destroyed) > 0 {
			warn = "⚠️ "
		}
		fmt.Fprintf(b, "<details><summary>%s<b>%s</b>%s: Plan: %s</summary>\n",
			warn, markdown.EscapeHTML(l.Layer), l.place(htmlCode), r.Summary())
		// The summary line holds the counts: the lists follow, not the
		// "Plan:" line again.
		if lists := strings.TrimPrefix(r.MarkdownSummary(), "**Plan:** "+r.Summary()+"\n"); lists != "" {
			b.WriteString(lists)
		}
		if text != "" {
			b.WriteString("\n" + markdown.Block("diff", text))
		}
	default:
		fmt.Fprintf(b, "<details open><summary>❌ <b>%s</b>%s: %s</summary>\n\n", markdown.EscapeHTML(l.Layer), l.place(htmlCode), l.outcomeWord())
		msg := l.Error
		if msg == "" {
			msg = "no plan"
		}
		b.WriteString(markdown.Block("", msg))
	}
	if l.LogURL != "" {
		fmt.Fprintf(b, "\n[Full log](%s)\n", l.LogURL)
	}
	b.WriteString("\n</details>\n\n")
	b.WriteString(l.Policy.lines(l.Layer))
	b.WriteString(l.next() + "\n")
}

func (l layerReport) outcomeWord() string {
	switch l.outcome() {
	case layerBlocked:
		return "blocked"
	case layerCancelled:
		return "cancelled"
	}
	return "failed"
}

// next is the line that tells what to do about a layer, as the commands to
// comment.
func (l layerReport) next() string {
	apply, unlock, plan := markdown.Quote("/apply "+l.Layer), markdown.Quote("/unlock "+l.Layer), markdown.Quote("/plan "+l.Layer)
	switch l.outcome() {
	case layerChanged:
		if l.OnMerge {
			return l.nextOnMerge(apply, unlock)
		}
		if l.CodeOwners != "" {
			return "Next: code owners must approve first, as " + apply + " would be refused now: " + l.CodeOwners + ". Then " + apply + " to apply."
		}
		if l.LocksOnApply {
			// The plan took no lock: there is none to unlock.
			return "Next: " + apply + " to apply; the layer locks on apply, so this plan holds no lock."
		}
		return "Next: " + apply + " to apply, " + unlock + " to drop the plan and the lock."
	case layerBlocked:
		return fmt.Sprintf("Next: once #%d is merged or closed, or releases the lock with %s, comment %s again.", l.BlockedBy, unlock, plan)
	case layerCancelled:
		return "Next: " + plan + " to plan it again."
	}
	if l.LocksOnApply {
		return "Next: " + plan + " to plan again once the cause is fixed."
	}
	return "Next: " + plan + " to plan again once the cause is fixed, " + unlock + " to drop the lock."
}

// nextOnMerge is the next step of a layer that applies on merge
// (auto_apply: on_merge): merging applies it, if the plan of the merge
// commit makes these changes; /apply still applies it before.
func (l layerReport) nextOnMerge(apply, unlock string) string {
	how := "merging applies it: Strata plans the merge commit and applies that plan only if it makes these changes (" + apply + " applies it now instead"
	if !l.LocksOnApply {
		how += ", " + unlock + " drops the plan and the lock"
	}
	how += ")."
	if l.CodeOwners != "" {
		return "Next: code owners must approve first, as neither " + apply + " nor the merge would apply it now: " + l.CodeOwners + ". Then " + how
	}
	return "Next: " + how
}

// place says where the layer was planned: its dir (when its name is not
// already the dir), workspace and commit, each as code.
func (l layerReport) place(code func(string) string) string {
	var parts []string
	if l.Dir != "" && l.Dir != l.Layer {
		parts = append(parts, code(l.Dir))
	}
	if l.Workspace != "" {
		parts = append(parts, "workspace "+code(l.Workspace))
	}
	if l.HeadSHA != "" {
		parts = append(parts, "at "+code(report.Short(l.HeadSHA)))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func mdCode(s string) string   { return markdown.Quote(s) }
func htmlCode(s string) string { return "<code>" + markdown.EscapeHTML(s) + "</code>" }

// withoutPlanLine drops Terraform's "Plan: ..." line from a plan's text: the
// section's summary line says it, and stays when the text is cut.
func withoutPlanLine(text string) string {
	var out []string
	dropped := false
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "Plan: ") {
			dropped = true
			continue
		}
		// No two blank lines where the line was.
		blankAgain := dropped && l == "" && len(out) > 0 && out[len(out)-1] == ""
		dropped = false
		if blankAgain {
			continue
		}
		out = append(out, l)
	}
	return strings.TrimRight(strings.Join(out, "\n"), "\n") + "\n"
}
