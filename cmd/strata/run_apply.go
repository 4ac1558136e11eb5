package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
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

// layerOutcome is one layer's line of the apply summary.
type layerOutcome struct {
	layer config.Layer
	plan  *terraform.PlanResult
	state applyState
	why   string // the error, or the layer in the way
}

func (o layerOutcome) String() string {
	name := "`" + o.layer.Name + "`"
	switch o.state {
	case toApply:
		return fmt.Sprintf("%s: to apply: %s", name, o.plan.Summary())
	case applied:
		return fmt.Sprintf("✅ %s: applied: %s", name, o.plan.Summary())
	case noChanges:
		return fmt.Sprintf("➖ %s: not applied: no changes", name)
	case planFailed:
		return fmt.Sprintf("❌ %s: not applied: its plan failed: %s", name, o.why)
	case refused:
		return fmt.Sprintf("⛔ %s: not applied: refused: %s", name, o.why)
	case notConfirmed:
		return fmt.Sprintf("⏸️ %s: not applied: not confirmed", name)
	case skipped:
		return fmt.Sprintf("⏭️ %s: not applied: %s", name, o.why)
	default:
		return fmt.Sprintf("❌ %s: apply failed: %s", name, o.why)
	}
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
				o.state, o.why = refused, fmt.Sprintf("it depends on `%s`, whose plan failed", dep)
			case j < i && outcomes[j].state == refused:
				o.state, o.why = refused, fmt.Sprintf("it depends on `%s`, which is refused", dep)
			case j > i && reports[j].Result.HasChanges:
				o.state, o.why = refused, fmt.Sprintf("it depends on `%s`, which would be applied after it: name `%s` before it", dep, dep)
			}
		}
		outcomes[i] = o
	}
	return outcomes
}

// applyLayers asks for confirmation unless yes, applies the layers to
// apply in order, stopping at the first failure, and prints the summary.
func applyLayers(ctx context.Context, cmd *cobra.Command, yes bool, root string, layers []config.Layer, reports []terraform.LayerReport, red *redact.Redactor) error {
	out, log := cmd.OutOrStdout(), cmd.ErrOrStderr()
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
			o.state, o.why = skipped, fmt.Sprintf("`%s` failed before it", failed)
			continue
		}
		fmt.Fprintf(log, "\n[strata] applying %s\n", o.layer.Name)
		bin, kind := localBinary(o.layer)
		res, err := terraform.Apply(ctx, terraform.ApplyInput{
			Setup:    terraform.Setup{WorkDir: filepath.Join(root, filepath.FromSlash(o.layer.Dir)), Root: root, Workspace: o.layer.Workspace, TerraformBin: bin, Kind: kind, Env: userEnv(), Log: log},
			PlanFile: o.plan.PlanFile,
		})
		if res != nil {
			red.Add(res.Sensitive...)
		}
		if err != nil {
			o.state, o.why, failed = applyFailed, report.FirstLine(red.String(err.Error())), o.layer.Name
			continue
		}
		o.state = applied
	}
	fmt.Fprintln(out, "\n**Terraform apply:**")
	notApplied := 0
	for _, o := range outcomes {
		fmt.Fprintf(out, "\n- %s", o)
		if o.state != applied && o.state != noChanges {
			notApplied++
		}
	}
	fmt.Fprintln(out)
	if notApplied > 0 {
		return fmt.Errorf("%d of %s not applied", notApplied, words.Count(len(outcomes), "layer", "layers"))
	}
	return nil
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
				fmt.Fprintf(log, "  %s\n", strings.ReplaceAll(o.String(), "`", ""))
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
