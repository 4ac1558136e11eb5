package terraform

import (
	"fmt"
	"strings"

	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/words"
)

// LayerReport is one layer's part of a plan comment: a plan, or why there
// is none.
type LayerReport struct {
	Layer  string // the layer's name, as users call it
	Result *PlanResult
	Err    error
	// Stopped names why a layer has no plan when it did not fail
	// ("blocked", "cancelled"), said where "failed" would be; Err says more.
	Stopped string
	// Where the layer was planned, each said when set: its dir (unless the
	// layer is named by it), its workspace and the commit, as given.
	Dir, Workspace, Commit string
	// LogURL links to the full log; shown when there is one, and always
	// worth having when the plan text had to be cut.
	LogURL string
	// Next follows the layer's section: on a pull request, the policy
	// findings and the commands to comment. It is Markdown as given, never
	// cut: whoever writes it quotes what a PR controls.
	Next string
}

// PlanComment is the plans of one command, several layers, as one comment:
// the Strata server posts it on the pull request, `strata run plan
// --format markdown` prints it.
type PlanComment struct {
	Layers []LayerReport
	// End closes the comment, Markdown as given (the server's note that one
	// /apply applies every layer); "" for none.
	End string
}

// Markdown renders the comment within markdown.MaxBytes. Each layer with
// changes is a collapsible <details> whose summary line holds the "Plan:"
// counts (and a ⚠️ when something is replaced or destroyed), then the
// replaced, destroyed and changed addresses and the plan text in a diff
// fence; a layer without changes is one line; a layer without a plan says
// why, open. When the comment would be too long, the plan texts are cut,
// each given an equal share of the room (a short one leaves its unused share
// to others): where the layers were planned and what comes next stay.
func (c PlanComment) Markdown() string {
	return c.within(markdown.MaxBytes)
}

func (c PlanComment) within(limit int) string {
	texts := make([]string, len(c.Layers))
	for i, l := range c.Layers {
		if l.changed() {
			texts[i] = DiffText(withoutPlanLine(l.Result.Text))
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
	budgets := markdown.ShareRoom(texts, limit-len(c.render(standIns)))
	for i, t := range texts {
		note := "… plan cut to fit in a comment"
		if c.Layers[i].LogURL != "" {
			note += "; see the full log"
		}
		texts[i] = Truncate(t, budgets[i], note)
	}
	// Only error messages, which are not cut above, can still be too long.
	return markdown.Cut(c.render(texts), limit, "\n\n… comment cut to fit")
}

func (c PlanComment) render(texts []string) string {
	var b strings.Builder
	failed, changed := 0, 0
	for _, l := range c.Layers {
		switch {
		case !l.planned():
			failed++
		case l.changed():
			changed++
		}
	}
	n := len(c.Layers)
	fmt.Fprintf(&b, "**Terraform plan:** %d %s, %d with changes", n, words.Plural(n, "layer", "layers"), changed)
	if failed > 0 {
		fmt.Fprintf(&b, ", %d failed", failed)
	}
	b.WriteString("\n")
	for i, l := range c.Layers {
		b.WriteString("\n")
		l.render(&b, texts[i])
	}
	if c.End != "" {
		b.WriteString("\n" + c.End + "\n")
	}
	return b.String()
}

// planned: Terraform made the layer's plan.
func (l LayerReport) planned() bool { return l.Err == nil && l.Stopped == "" && l.Result != nil }

// changed: the layer's plan has changes to review.
func (l LayerReport) changed() bool { return l.planned() && l.Result.HasChanges }

func (l LayerReport) render(b *strings.Builder, text string) {
	switch {
	case l.changed():
		r := l.Result
		warn := ""
		if len(r.Replaced)+len(r.Destroyed) > 0 {
			warn = "⚠️ "
		}
		fmt.Fprintf(b, "<details><summary>%s<b>%s</b>%s: Plan: %s</summary>\n",
			warn, markdown.EscapeHTML(l.Layer), l.place(htmlCode), r.Summary())
		b.WriteString(r.markdownLists())
		if text != "" {
			b.WriteString("\n" + markdown.Block("diff", text))
		}
	case l.planned():
		fmt.Fprintf(b, "✅ **%s**%s: no changes.\n", l.Layer, l.place(markdown.Quote))
		l.writeNext(b)
		return
	default:
		word, msg := "failed", "no plan"
		if l.Stopped != "" {
			word = l.Stopped
		}
		if l.Err != nil {
			msg = l.Err.Error()
		}
		fmt.Fprintf(b, "<details open><summary>❌ <b>%s</b>%s: %s</summary>\n\n",
			markdown.EscapeHTML(l.Layer), l.place(htmlCode), markdown.EscapeHTML(word))
		b.WriteString(markdown.Block("", msg))
	}
	if l.LogURL != "" {
		fmt.Fprintf(b, "\n[Full log](%s)\n", l.LogURL)
	}
	b.WriteString("\n</details>\n")
	l.writeNext(b)
}

func (l LayerReport) writeNext(b *strings.Builder) {
	if l.Next != "" {
		b.WriteString("\n" + l.Next + "\n")
	}
}

// place says where the layer was planned: its dir (when its name is not
// already the dir), workspace and commit, each as code.
func (l LayerReport) place(code func(string) string) string {
	var parts []string
	if l.Dir != "" && l.Dir != l.Layer {
		parts = append(parts, code(l.Dir))
	}
	if l.Workspace != "" {
		parts = append(parts, "workspace "+code(l.Workspace))
	}
	if l.Commit != "" {
		parts = append(parts, "at "+code(l.Commit))
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// htmlCode is code inside HTML (a <summary>), where backticks are not read.
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
