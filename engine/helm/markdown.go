package helm

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/words"
)

// Markdown renders the report as a check run body of at most limit bytes
// (markdown.MaxBytes for a whole check run). The summary, hook table and
// cause always come first; logs share what is left, failed hooks first, each
// cut to its tail (where failures show) at a UTF-8 boundary with a note.
// Mask or Redact the report before rendering.
func (r *Report) Markdown(limit int) string {
	var head strings.Builder
	r.writeSummary(&head)
	var tail strings.Builder
	r.writeWrites(&tail)

	budget := limit - head.Len() - tail.Len()
	logs := r.renderLogs(budget)
	return markdown.Cut(head.String()+logs+tail.String(), limit, "\n\n… cut to fit the check run.")
}

func (r *Report) writeSummary(b *strings.Builder) {
	if r.Passed() {
		fmt.Fprintf(b, "### ✅ Helm tests passed\n\n")
	} else {
		fmt.Fprintf(b, "### ❌ Helm tests failed: %s\n\n", r.Cause())
	}
	fmt.Fprintf(b, "Release %s in %s is at revision **%d** (%s) after the %s of chart %s %s",
		markdown.Quote(r.Release), markdown.Quote(r.Namespace), r.Revision, r.Status, r.Action, markdown.Quote(r.ChartName), r.ChartVersion)
	if r.AppVersion != "" {
		fmt.Fprintf(b, ", app version %s", r.AppVersion)
	}
	fmt.Fprintf(b, ", values %s.\n\n", markdown.Quote(r.ValuesDigest))
	if u := r.Unlocked; u != nil {
		fmt.Fprintf(b, "🔓 Revision %d was stuck in %s and was marked failed before the %s.", u.Revision, markdown.Quote(u.From), r.Action)
		if u.Err != "" {
			fmt.Fprintf(b, " Unlocking failed: %s", oneLine(u.Err))
		}
		b.WriteString("\n\n")
	}
	if r.UpgradeErr != "" {
		fmt.Fprintf(b, "**The %s %s:** %s\n\n", r.Action, r.UpgradeCause, markdown.Quote(oneLine(r.UpgradeErr)))
	}
	if len(r.UpgradeHooks) > 0 {
		fmt.Fprintf(b, "| %s hook | event | phase | duration |\n| --- | --- | --- | --- |\n", r.Action)
		for _, h := range r.UpgradeHooks {
			fmt.Fprintf(b, "| %s | %s | %s %s | %s |\n", markdown.QuoteCell(h.Name), h.Event, phaseIcon(h.Phase), h.Phase, duration(h))
		}
		b.WriteString("\n")
	}
	if len(r.Hooks) > 0 {
		b.WriteString("| hook | phase | duration |\n| --- | --- | --- |\n")
		for _, h := range r.Hooks {
			fmt.Fprintf(b, "| %s | %s %s | %s |\n", markdown.QuoteCell(h.Name), phaseIcon(h.Phase), h.Phase, duration(h))
		}
		b.WriteString("\n")
	} else if r.UpgradeErr == "" {
		b.WriteString("The chart has no test hooks")
		if len(r.Filters) > 0 {
			fmt.Fprintf(b, " named %s", strings.Join(r.Filters, ", "))
		}
		b.WriteString(".\n\n")
	}
	for _, h := range r.Hooks {
		if h.Cause != CauseNone {
			fmt.Fprintf(b, "**%s %s:** %s\n\n", markdown.Quote(h.Name), h.Cause, markdown.Quote(oneLine(h.Err)))
		}
	}
	if r.TestErr != "" && !r.anyHookFailed() {
		fmt.Fprintf(b, "**The test run failed:** %s\n\n", markdown.Quote(oneLine(r.TestErr)))
	}
	if m := r.Remediation; m != nil {
		switch {
		case m.Action == "rollback":
			fmt.Fprintf(b, "↩️ Remediation: rolled back to revision %d", m.ToRevision)
		default:
			b.WriteString("🗑️ Remediation: uninstalled the release")
		}
		if m.Reason != "" {
			fmt.Fprintf(b, " (%s)", m.Reason)
		}
		if m.Err != "" {
			fmt.Fprintf(b, ", which failed: %s", oneLine(m.Err))
		}
		b.WriteString(".\n\n")
	}
}

func (r *Report) anyHookFailed() bool {
	for _, h := range r.Hooks {
		if h.Phase == PhaseFailed {
			return true
		}
	}
	return false
}

// renderLogs renders one <details> block per hook with logs within budget.
func (r *Report) renderLogs(budget int) string {
	type block struct {
		idx    int
		header string
		text   string
	}
	var blocks []block
	hooks := append(slices.Clone(r.UpgradeHooks), r.Hooks...)
	for i, h := range hooks {
		if len(h.Logs) == 0 {
			continue
		}
		var text strings.Builder
		for _, l := range h.Logs {
			if len(h.Logs) > 1 || l.Err != "" {
				fmt.Fprintf(&text, "--- pod %s ---\n", l.Pod)
			}
			text.WriteString(l.Text)
			if l.Err != "" {
				fmt.Fprintf(&text, "(logs unavailable: %s)\n", l.Err)
			}
		}
		state := string(h.Phase)
		if h.Event != "" {
			state = h.Event + ", " + state
		}
		header := fmt.Sprintf("<details><summary>Logs of <code>%s</code> (%s)</summary>\n\n", h.Name, state)
		blocks = append(blocks, block{idx: i, header: header, text: text.String()})
	}
	// Failed hooks get their share first.
	order := make([]int, len(blocks))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return hooks[blocks[order[a]].idx].Phase == PhaseFailed && hooks[blocks[order[b]].idx].Phase != PhaseFailed
	})
	rendered := make([]string, len(blocks))
	left := budget
	for n, i := range order {
		bl := blocks[i]
		frame := len(bl.header) + 2*len(markdown.Fence(bl.text)) + len("text\n\n\n</details>\n\n") + 80
		share := left/(len(order)-n) - frame
		if share < 0 {
			continue // no room for even the frame: leave this hook's logs out
		}
		text := markdown.Tail(bl.text, share)
		if len(text) < len(bl.text) {
			text = fmt.Sprintf("… %d earlier bytes cut to fit the check run …\n%s", len(bl.text)-len(text), text)
		}
		rendered[i] = bl.header + markdown.Block("text", text) + "\n</details>\n\n"
		left -= len(rendered[i])
	}
	return strings.Join(rendered, "")
}

func (r *Report) writeWrites(b *strings.Builder) {
	if len(r.Writes) == 0 {
		return
	}
	b.WriteString("<details><summary>Release writes</summary>\n\n| op | revision | status | description |\n| --- | --- | --- | --- |\n")
	for _, w := range r.Writes {
		desc := w.Description
		if w.Err != "" {
			desc = "not written: " + w.Err
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s |\n", w.Op, w.Revision, w.Status, markdown.QuoteCell(oneLine(desc)))
	}
	b.WriteString("\n</details>\n")
}

func phaseIcon(p Phase) string {
	switch p {
	case PhaseSucceeded:
		return "✅"
	case PhaseFailed:
		return "❌"
	case PhaseSkipped:
		return "⏭️"
	}
	return "❔"
}

func duration(h HookResult) string {
	if h.Phase == PhaseSkipped || h.Started.IsZero() {
		return "—"
	}
	return words.Duration(h.Duration)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
