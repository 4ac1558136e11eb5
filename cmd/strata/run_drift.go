package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/spf13/cobra"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/redact"
	"strata.dev/strata/report"
	"strata.dev/strata/words"
)

// Exit codes of `strata run drift`.
const (
	exitDrifted = 2 // a layer drifted (and none failed)
)

// exitError ends the command with its own exit code.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// strata run drift: what the server's drift detection does, on a checkout
// of the default branch.
func init() {
	var repoDir, format string
	drift := &cobra.Command{
		Use:   "drift [LAYER...]",
		Short: "Plan the layers that ask for drift detection and say which drifted",
		Long: `Plan the layers of the checkout in --repo whose .strata.yaml asks for drift
detection (drift: {schedule: ...}, on the layer or the whole file), or the
layers named (by name or dir) whatever their setting, the way the server's
drift runs do, and print for each: clean, drifted (with the plan's summary
and changed addresses) or failed, in --format text (the default), markdown
or json (docs/cli.md). Terraform from STRATA_TERRAFORM_BIN or PATH
(OpenTofu from STRATA_TOFU_BIN or PATH for engine: tofu).

Exit status: 0 when every layer is clean, 2 when a layer drifted and none
failed, 1 when a layer failed to plan or the command itself failed. A
wrong command line (an unknown layer too) also exits 2, with nothing on
stdout.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			o, err := outputOf(cmd, format)
			if err != nil {
				return err
			}
			return runDrift(ctx, cmd.OutOrStdout(), o, repoDir, args)
		},
	}
	drift.Flags().StringVar(&repoDir, "repo", ".", "the checkout's root")
	addFormatFlag(drift, &format)
	runCmd.AddCommand(drift)
}

func runDrift(ctx context.Context, out io.Writer, o output, repoDir string, names []string) error {
	root, err := filepath.Abs(repoDir)
	if err != nil {
		return err
	}
	all, err := localLayers(root)
	if err != nil {
		return err
	}
	picked, err := pickLayers(all, names, root)
	if err != nil {
		return err
	}
	if len(names) == 0 {
		for _, l := range all {
			if l.Drift.On() {
				picked = append(picked, l)
			}
		}
	}
	if len(picked) == 0 {
		return fmt.Errorf("no layer of %s asks for drift detection: add drift: {schedule: \"every 6h\"} to a layer or the file, or name layers", config.RepoFile)
	}
	runs, err := withBinaries(picked)
	if err != nil {
		return err
	}
	red, _ := redact.New(nil)
	reports := make([]terraform.LayerReport, len(runs))
	drifted, failed := 0, 0
	for i, run := range runs {
		res, err := terraform.Plan(ctx, terraform.PlanInput{Setup: run.setup(root, nil), VarFiles: run.layer.VarFiles})
		if res != nil {
			red.Add(res.Sensitive...)
		}
		reports[i] = terraform.LayerReport{Layer: run.layer.Name, Result: res, Err: err}
		switch driftStatus(reports[i]) {
		case "failed":
			failed++
		case "drifted":
			drifted++
		}
	}
	writeDriftReport(out, o, runs, reports, red)
	switch {
	case failed > 0:
		return fmt.Errorf("%d of %s failed to plan", failed, words.Count(len(runs), "layer", "layers"))
	case drifted > 0:
		return &exitError{code: exitDrifted, msg: fmt.Sprintf("%d of %s drifted", drifted, words.Count(len(runs), "layer", "layers"))}
	}
	return nil
}

func driftStatus(r terraform.LayerReport) string {
	switch {
	case r.Err != nil || r.Result == nil:
		return "failed"
	case r.Result.HasChanges:
		return "drifted"
	}
	return "clean"
}

// writeDriftReport says of each layer whether it is clean, drifted (with
// the changed addresses) or failed.
func writeDriftReport(w io.Writer, o output, runs []localRun, reports []terraform.LayerReport, red *redact.Redactor) {
	if o.format == formatJSON {
		layers := make([]jsonLayer, len(runs))
		for i, run := range runs {
			layers[i] = layerJSON(run, reports[i])
			layers[i].Status = driftStatus(reports[i])
			if reports[i].Err != nil {
				layers[i].Reason = reports[i].Err.Error()
			}
		}
		writeJSON(w, "drift", layers, red)
		return
	}
	md := o.format == formatMarkdown
	p := paint(o.color)
	if md {
		fmt.Fprintf(w, "**Terraform drift:** %s\n\n", words.Count(len(runs), "layer", "layers"))
	}
	for _, rep := range reports {
		status := driftStatus(rep)
		name := p.with(ansiBold, rep.Layer)
		if md {
			name = map[string]string{"clean": "✅ ", "drifted": "⚠️ ", "failed": "❌ "}[status] + "`" + rep.Layer + "`"
		}
		switch status {
		case "failed":
			msg := red.String(rep.Err.Error())
			if md {
				msg = report.FirstLine(msg)
			}
			fmt.Fprintf(w, "%s%s: %s: %s\n", bullet(md), name, p.with(ansiRed, "failed"), msg)
		case "drifted":
			fmt.Fprintf(w, "%s%s: %s: %s\n", bullet(md), name, p.with(ansiYellow, "drifted"), rep.Result.Summary())
			for _, addr := range rep.Result.Changed {
				if md {
					addr = "- `" + addr + "`"
				}
				fmt.Fprintf(w, "  %s\n", addr)
			}
		default:
			fmt.Fprintf(w, "%s%s: %s\n", bullet(md), name, p.with(ansiGreen, "clean"))
		}
	}
}

func bullet(md bool) string {
	if md {
		return "- "
	}
	return ""
}
