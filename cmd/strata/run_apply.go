package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/redact"
	"strata.dev/strata/report"
	"strata.dev/strata/words"
)

// applyState is what became of a layer in `strata run apply`.
type applyState int

const (
	toApply      applyState = iota // planned with changes, nothing stands in the way
	applied                        // Terraform applied the plan
	noChanges                      // nothing to apply
	planFailed                     // no plan to apply
	refused                        // a layer it depends on is not applied
	notConfirmed                   // the operator did not answer yes
	skipped                        // an earlier layer failed to apply
	applyFailed                    // Terraform failed applying the plan
)

// layerOutcome is what became of one layer, for the apply summary.
type layerOutcome struct {
	layer config.Layer
	plan  *terraform.PlanResult
	state applyState
	why   string // Terraform's error, or what stands in the way with %[1]s for dep
	dep   string // the layer in the way
}

// The words of each state, in the summary and in JSON.
var applyStates = map[applyState]struct{ words, json string }{
	toApply:      {"to apply", "to_apply"},
	applied:      {"applied", "applied"},
	noChanges:    {"not applied: no changes", "no_changes"},
	planFailed:   {"not applied: its plan failed", "plan_failed"},
	refused:      {"not applied: refused", "refused"},
	notConfirmed: {"not applied: not confirmed", "not_confirmed"},
	skipped:      {"not applied", "skipped"},
	applyFailed:  {"apply failed", "apply_failed"},
}

// reason is why the layer was not applied, with the layer in the way
// quoted by quote; "" when there is nothing to say.
func (o layerOutcome) reason(quote func(string) string) string {
	if o.dep != "" {
		return fmt.Sprintf(o.why, quote(o.dep))
	}
	return o.why
}

// line is the summary's line of the layer: "STATE: DETAIL".
func (o layerOutcome) line(quote func(string) string) string {
	s := applyStates[o.state].words
	switch o.state {
	case toApply, applied:
		return s + ": " + o.plan.Summary()
	case noChanges, notConfirmed:
		return s
	}
	return s + ": " + o.reason(quote)
}

// String is the markdown line of the summary.
func (o layerOutcome) String() string {
	icon := map[applyState]string{applied: "✅ ", noChanges: "➖ ", planFailed: "❌ ", refused: "⛔ ", notConfirmed: "⏸️ ", skipped: "⏭️ ", applyFailed: "❌ "}[o.state]
	return icon + "`" + o.layer.Name + "`: " + o.line(func(s string) string { return "`" + s + "`" })
}

// text is the plain line of the summary, coloured by p.
func (o layerOutcome) text(p paint) string {
	color := map[applyState]string{applied: ansiGreen, noChanges: ansiGreen, toApply: ansiYellow, notConfirmed: ansiYellow}[o.state]
	if color == "" {
		color = ansiRed
	}
	state, detail, _ := strings.Cut(o.line(func(s string) string { return s }), ": ")
	if o.state == toApply || o.state == applied {
		return p.with(ansiBold, o.layer.Name) + ": " + p.with(color, state) + ": " + detail
	}
	if detail != "" {
		detail = ": " + detail
	}
	return p.with(ansiBold, o.layer.Name) + ": " + p.with(color, state) + detail
}

// decideApply names each planned layer's state before anything is
// applied. As the server refuses a layer whose depends_on layer has a plan
// that is not applied, a layer is refused when a layer of this run it
// depends on failed to plan, is refused, or would be applied after it.
func decideApply(layers []config.Layer, reports []terraform.LayerReport, red *redact.Redactor) []layerOutcome {
	outcomes := make([]layerOutcome, len(layers))
	index := map[string]int{}
	for i, l := range layers {
		index[l.Name] = i
	}
	for i, l := range layers {
		o := layerOutcome{layer: l, plan: reports[i].Result, state: toApply}
		switch {
		case reports[i].Err != nil:
			o.state, o.why = planFailed, report.FirstLine(red.String(reports[i].Err.Error()))
		case !o.plan.HasChanges:
			o.state = noChanges
		}
		for _, dep := range l.DependsOn {
			j, inRun := index[dep]
			if o.state != toApply || !inRun {
				continue
			}
			switch {
			case reports[j].Err != nil:
				o.state, o.why, o.dep = refused, "it depends on %[1]s, whose plan failed", dep
			case j < i && outcomes[j].state == refused:
				o.state, o.why, o.dep = refused, "it depends on %[1]s, which is refused", dep
			case j > i && reports[j].Result.HasChanges:
				o.state, o.why, o.dep = refused, "it depends on %[1]s, which would be applied after it: name %[1]s before it", dep
			}
		}
		outcomes[i] = o
	}
	return outcomes
}

// applyLayers asks for confirmation unless yes, and applies the layers to
// apply in order, stopping at the first failure.
func applyLayers(ctx context.Context, cmd *cobra.Command, yes bool, root string, runs []localRun, reports []terraform.LayerReport, red *redact.Redactor) []layerOutcome {
	log := cmd.ErrOrStderr()
	layers := make([]config.Layer, len(runs))
	for i, r := range runs {
		layers[i] = r.layer
	}
	outcomes := decideApply(layers, reports, red)
	n := 0
	for _, o := range outcomes {
		if o.state == toApply {
			n++
		}
	}
	if n > 0 && !yes && !confirm(cmd.InOrStdin(), log, outcomes, n) {
		for i := range outcomes {
			if outcomes[i].state == toApply {
				outcomes[i].state = notConfirmed
			}
		}
	}
	failed := ""
	for i := range outcomes {
		o := &outcomes[i]
		if o.state != toApply {
			continue
		}
		if failed != "" {
			o.state, o.why, o.dep = skipped, "%[1]s failed before it", failed
			continue
		}
		fmt.Fprintf(log, "\n[strata] applying %s\n", o.layer.Name)
		res, err := terraform.Apply(ctx, terraform.ApplyInput{Setup: runs[i].setup(root, log), PlanFile: o.plan.PlanFile})
		if res != nil {
			red.Add(res.Sensitive...)
		}
		if err != nil {
			o.state, o.why, failed = applyFailed, report.FirstLine(red.String(err.Error())), o.layer.Name
			continue
		}
		o.state = applied
	}
	return outcomes
}

// confirm lists what will be applied and what will not, and asks; only
// "yes" goes ahead, as with terraform apply.
func confirm(in io.Reader, log io.Writer, outcomes []layerOutcome, n int) bool {
	fmt.Fprintln(log, "\nWill apply:")
	for _, o := range outcomes {
		if o.state == toApply {
			fmt.Fprintf(log, "  %s: %s\n", o.layer.Name, o.plan.Summary())
		}
	}
	if n < len(outcomes) {
		fmt.Fprintln(log, "Will not apply:")
		for _, o := range outcomes {
			if o.state != toApply {
				fmt.Fprintf(log, "  %s\n", o.text(false))
			}
		}
	}
	fmt.Fprint(log, words.Plural(n, "Apply this layer?", fmt.Sprintf("Apply these %d layers?", n)), " Only 'yes' is accepted: ")
	answer, _ := bufio.NewReader(in).ReadString('\n')
	return strings.TrimSpace(answer) == "yes"
}

// stdinIsTerminal says whether someone can answer a question on in; a
// variable so that tests can be someone.
var stdinIsTerminal = func(in io.Reader) bool {
	f, ok := in.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}
