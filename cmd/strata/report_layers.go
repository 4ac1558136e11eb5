package main

import (
	"fmt"
	"io"
	"strings"

	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/redact"
	"strata.dev/strata/words"
)

// writePlanReport writes the plans of a run in o's format; everything
// that reaches w is masked by red.
func writePlanReport(w io.Writer, o output, runs []localRun, reports []terraform.LayerReport, red *redact.Redactor) {
	switch o.format {
	case formatMarkdown:
		// The pull request's comment without what is said there only: the
		// policy findings and the commands to comment next.
		fmt.Fprintln(w, red.String(terraform.PlanComment{Layers: reports}.Markdown()))
	case formatJSON:
		layers := make([]jsonLayer, len(runs))
		for i, run := range runs {
			layers[i] = layerJSON(run, reports[i])
			layers[i].Status = planStatus(reports[i])
			if reports[i].Err != nil {
				layers[i].Reason = reports[i].Err.Error()
			}
		}
		writeJSON(w, "plan", layers, red)
	default:
		writePlanText(w, paint(o.color), reports, red)
	}
}

func planStatus(r terraform.LayerReport) string {
	switch {
	case r.Err != nil || r.Result == nil:
		return "failed"
	case r.Result.HasChanges:
		return "changes"
	}
	return "no_changes"
}

// writePlanText is each layer's counts, what it replaces or destroys, and
// Terraform's plan as Terraform printed it, then the run's totals last,
// where a terminal leaves them in view.
func writePlanText(w io.Writer, p paint, reports []terraform.LayerReport, red *redact.Redactor) {
	changed, failed := 0, 0
	for _, l := range reports {
		if l.Err != nil || l.Result == nil {
			failed++
			fmt.Fprintf(w, "%s: %s\n", p.with(ansiBold, l.Layer), p.with(ansiRed, "failed"))
			msg := "no plan"
			if l.Err != nil {
				msg = red.String(l.Err.Error())
			}
			indent(w, "  ", msg)
			fmt.Fprintln(w)
			continue
		}
		r := l.Result
		color := ansiGreen
		if r.HasChanges {
			changed++
			color = ansiYellow
		}
		fmt.Fprintf(w, "%s: %s\n", p.with(ansiBold, l.Layer), p.with(color, r.Summary()))
		if len(r.Replaced) > 0 {
			fmt.Fprintf(w, "  %s %s\n", p.with(ansiRed, fmt.Sprintf("%d to replace (destroyed, then created):", len(r.Replaced))), strings.Join(r.Replaced, ", "))
		}
		if len(r.Destroyed) > 0 {
			fmt.Fprintf(w, "  %s %s\n", p.with(ansiRed, fmt.Sprintf("%d to destroy:", len(r.Destroyed))), strings.Join(r.Destroyed, ", "))
		}
		if text := strings.Trim(red.String(r.Text), "\n"); text != "" && r.HasChanges {
			fmt.Fprintln(w)
			for _, line := range strings.Split(text, "\n") {
				if strings.TrimSpace(line) == "" {
					fmt.Fprintln(w)
					continue
				}
				fmt.Fprintln(w, "  "+planLine(p, line))
			}
		}
		fmt.Fprintln(w)
	}
	total := fmt.Sprintf("Plan: %s, %d with changes", words.Count(len(reports), "layer", "layers"), changed)
	if failed > 0 {
		total += fmt.Sprintf(", %d failed", failed)
	}
	fmt.Fprintln(w, p.with(ansiBold, total))
}

// planLine colours the action symbol that starts a line of Terraform's
// plan the way Terraform does at a terminal: create green, destroy red,
// update and replace yellow.
func planLine(p paint, line string) string {
	body := strings.TrimLeft(line, " ")
	lead := line[:len(line)-len(body)]
	sym, rest, _ := strings.Cut(body, " ")
	color := map[string]string{"+": ansiGreen, "-": ansiRed, "~": ansiYellow, "-/+": ansiYellow, "+/-": ansiYellow, "<=": ansiGreen}[sym]
	if color == "" || !p {
		return line
	}
	if rest != "" || strings.HasSuffix(body, " ") {
		rest = " " + rest
	}
	return lead + p.with(color, sym) + rest
}

// writeApplyReport writes the outcome of each layer of an apply; with
// json, the plans too, in the one document.
func writeApplyReport(w io.Writer, o output, runs []localRun, reports []terraform.LayerReport, outcomes []layerOutcome, red *redact.Redactor) {
	switch o.format {
	case formatMarkdown:
		fmt.Fprintln(w, "\n**Terraform apply:**")
		for _, oc := range outcomes {
			fmt.Fprintf(w, "\n- %s", red.String(oc.String()))
		}
		fmt.Fprintln(w)
	case formatJSON:
		layers := make([]jsonLayer, len(runs))
		for i, run := range runs {
			layers[i] = layerJSON(run, reports[i])
			layers[i].Status = applyStates[outcomes[i].state].json
			layers[i].Reason = outcomes[i].reason(func(s string) string { return s })
		}
		writeJSON(w, "apply", layers, red)
	default:
		fmt.Fprintln(w)
		done, notApplied := 0, 0
		for _, oc := range outcomes {
			fmt.Fprintln(w, red.String(oc.text(paint(o.color))))
			switch oc.state {
			case applied:
				done++
			case noChanges:
			default:
				notApplied++
			}
		}
		total := fmt.Sprintf("Apply: %s, %d applied", words.Count(len(outcomes), "layer", "layers"), done)
		if notApplied > 0 {
			total += fmt.Sprintf(", %d not applied", notApplied)
		}
		fmt.Fprintln(w, paint(o.color).with(ansiBold, total))
	}
}
