package terraform

import (
	"fmt"
	"strings"

	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/words"
)

// maxListed caps each list of addresses in a summary.
const maxListed = 50

// Summary is the one-line count, as Terraform's "Plan:" line says it.
func (r *PlanResult) Summary() string {
	if !r.HasChanges {
		return "No changes"
	}
	s := fmt.Sprintf("%d to add, %d to change, %d to destroy", r.Add, r.Change, r.Destroy)
	if r.Import > 0 {
		s = fmt.Sprintf("%d to import, %s", r.Import, s)
	}
	if r.Add+r.Change+r.Destroy+r.Import == 0 && len(r.Outputs) > 0 {
		s += fmt.Sprintf(", %d output %s to change", len(r.Outputs), words.Plural(len(r.Outputs), "value", "values"))
	}
	return s
}

// MarkdownSummary is the plan's counts, its replacements and destroys called
// out by address, and the changed resources and outputs; each list is capped.
// It holds addresses and output names only, never values.
func (r *PlanResult) MarkdownSummary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "**Plan:** %s\n", r.Summary())
	if len(r.Replaced) > 0 {
		fmt.Fprintf(&b, "\n⚠️ **%d to replace** (destroyed, then created): %s\n", len(r.Replaced), codeList(r.Replaced))
	}
	if len(r.Destroyed) > 0 {
		fmt.Fprintf(&b, "\n⚠️ **%d to destroy**: %s\n", len(r.Destroyed), codeList(r.Destroyed))
	}
	if len(r.Changed) > 0 {
		b.WriteString("\nChanged resources:\n")
		for i, addr := range r.Changed {
			if i == maxListed {
				fmt.Fprintf(&b, "- … and %d more\n", len(r.Changed)-maxListed)
				break
			}
			fmt.Fprintf(&b, "- %s\n", markdown.Quote(addr))
		}
	}
	if len(r.Outputs) > 0 {
		names := make([]string, len(r.Outputs))
		for i, o := range r.Outputs {
			names[i] = fmt.Sprintf("%s (%s)", o.Name, o.Action)
		}
		fmt.Fprintf(&b, "\nChanged outputs: %s\n", codeList(names))
	}
	return b.String()
}

func codeList(items []string) string {
	shown := items
	if len(shown) > maxListed {
		shown = shown[:maxListed]
	}
	quoted := make([]string, len(shown))
	for i, item := range shown {
		quoted[i] = markdown.Quote(item)
	}
	s := strings.Join(quoted, ", ")
	if len(items) > len(shown) {
		s += fmt.Sprintf(" and %d more", len(items)-len(shown))
	}
	return s
}

// LayerReport is one layer's part of a plan comment: a plan or an error.
type LayerReport struct {
	Layer  string // the layer's name, as users call it
	Result *PlanResult
	Err    error
	// LogURL links to the full log; shown when there is one, and always
	// worth having when the plan text had to be cut.
	LogURL string
}

// Comment renders the plans of one command, several layers, as one markdown
// comment of at most markdown.MaxBytes: each layer in a collapsible <details>
// whose summary line shows the counts (and a ⚠️ when something is replaced
// or destroyed), holding MarkdownSummary and the plan text in a diff fence.
// When the comment would be too long, the plan texts are cut, each given an
// equal share of the room (a short one leaves its unused share to others).
func Comment(layers []LayerReport) string {
	return comment(layers, markdown.MaxBytes)
}

func comment(layers []LayerReport, limit int) string {
	texts := make([]string, len(layers))
	for i, l := range layers {
		if l.Err == nil && l.Result != nil {
			texts[i] = DiffText(l.Result.Text)
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
	fixed := len(render(layers, standIns))
	budgets := markdown.ShareRoom(texts, limit-fixed)
	for i, t := range texts {
		note := "… plan cut to fit in a comment"
		if layers[i].LogURL != "" {
			note += "; see the full log"
		}
		texts[i] = Truncate(t, budgets[i], note)
	}
	// Only error messages, which are not cut above, can still be too long.
	return markdown.Cut(render(layers, texts), limit, "\n\n… comment cut to fit")
}

func render(layers []LayerReport, texts []string) string {
	var b strings.Builder
	failed, changed := 0, 0
	for _, l := range layers {
		switch {
		case l.Err != nil:
			failed++
		case l.Result != nil && l.Result.HasChanges:
			changed++
		}
	}
	fmt.Fprintf(&b, "**Terraform plan:** %d %s, %d with changes", len(layers), words.Plural(len(layers), "layer", "layers"), changed)
	if failed > 0 {
		fmt.Fprintf(&b, ", %d failed", failed)
	}
	b.WriteString("\n")
	for i, l := range layers {
		b.WriteString("\n")
		renderLayer(&b, l, texts[i])
	}
	return b.String()
}

func renderLayer(b *strings.Builder, l LayerReport, text string) {
	if l.Err != nil || l.Result == nil {
		msg := "no plan"
		if l.Err != nil {
			msg = l.Err.Error()
		}
		fmt.Fprintf(b, "<details open><summary>❌ <b>%s</b>: failed</summary>\n\n", markdown.EscapeHTML(l.Layer))
		b.WriteString(markdown.Block("", msg))
		writeLogLink(b, l.LogURL)
		b.WriteString("\n</details>\n")
		return
	}
	r := l.Result
	warn := ""
	if len(r.Replaced)+len(r.Destroyed) > 0 {
		warn = "⚠️ "
	}
	fmt.Fprintf(b, "<details><summary>%s<b>%s</b>: %s</summary>\n\n", warn, markdown.EscapeHTML(l.Layer), r.Summary())
	b.WriteString(r.MarkdownSummary())
	if text != "" {
		b.WriteString("\n" + markdown.Block("diff", text))
	}
	writeLogLink(b, l.LogURL)
	b.WriteString("\n</details>\n")
}

func writeLogLink(b *strings.Builder, url string) {
	if url != "" {
		fmt.Fprintf(b, "\n[Full log](%s)\n", url)
	}
}

// DiffText moves the +, - and ~ that Terraform indents to the start of the
// line, where a diff fence colours them; ~ (update in place) becomes !, which
// GitHub's diff highlighting knows.
func DiffText(text string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		trimmed := strings.TrimLeft(line, " ")
		if trimmed == "" || !strings.ContainsRune("+-~", rune(trimmed[0])) {
			continue
		}
		sym := trimmed[:1]
		if sym == "~" {
			sym = "!"
		}
		lines[i] = sym + strings.Repeat(" ", len(line)-len(trimmed)) + trimmed[1:]
	}
	return strings.Join(lines, "\n")
}
