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
	return fmt.Sprintf("**Plan:** %s\n", r.Summary()) + r.markdownLists()
}

// markdownLists is MarkdownSummary without its "Plan:" line, for a plan
// comment whose section says the counts on its summary line.
func (r *PlanResult) markdownLists() string {
	var b strings.Builder
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
