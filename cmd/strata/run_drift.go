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
	var repoDir string
	drift := &cobra.Command{
		Use:   "drift [LAYER...]",
		Short: "Plan the layers that ask for drift detection and say which drifted",
		Long: `Plan the layers of the checkout in --repo whose .strata.yaml asks for drift
detection (drift: {schedule: ...}, on the layer or the whole file), or the
layers named (by name or dir) whatever their setting, the way the server's
drift runs do, and print for each: clean, drifted (with the plan's summary
and changed addresses) or failed. Terraform from STRATA_TERRAFORM_BIN or
PATH (OpenTofu from STRATA_TOFU_BIN or PATH for engine: tofu).

Exit status: 0 when every layer is clean, 2 when a layer drifted and none
failed, 1 when a layer failed to plan or the command itself failed. A
wrong command line also exits 2, with nothing on stdout.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runDrift(ctx, cmd.OutOrStdout(), repoDir, args)
		},
	}
	drift.Flags().StringVar(&repoDir, "repo", ".", "the checkout's root")
	runCmd.AddCommand(drift)
}

func runDrift(ctx context.Context, out io.Writer, repoDir string, names []string) error {
	root, err := filepath.Abs(repoDir)
	if err != nil {
		return err
	}
	all, err := localLayers(root)
	if err != nil {
		return err
	}
	var picked []config.Layer
	for _, l := range all {
		if len(names) == 0 && l.Drift.On() {
			picked = append(picked, l)
		}
	}
	for _, n := range names {
		found := false
		for _, l := range all {
			if l.Name == n || l.Dir == n {
				picked, found = append(picked, l), true
			}
		}
		if !found {
			return fmt.Errorf("no layer %q in %s", n, root)
		}
	}
	if len(picked) == 0 {
		return fmt.Errorf("no layer of %s asks for drift detection: add drift: {schedule: \"every 6h\"} to a layer or the file, or name layers", config.RepoFile)
	}
	red, _ := redact.New(nil)
	drifted, failed := 0, 0
	for _, l := range picked {
		bin, kind := localBinary(l)
		res, err := terraform.Plan(ctx, terraform.PlanInput{
			Setup:    terraform.Setup{WorkDir: filepath.Join(root, filepath.FromSlash(l.Dir)), Root: root, Workspace: l.Workspace, TerraformBin: bin, Kind: kind, Env: userEnv()},
			VarFiles: l.VarFiles,
		})
		switch {
		case err != nil:
			failed++
			fmt.Fprintf(out, "%s: failed: %s\n", l.Name, red.String(err.Error()))
		case res.HasChanges:
			drifted++
			red.Add(res.Sensitive...)
			fmt.Fprintf(out, "%s: drifted: %s\n", l.Name, res.Summary())
			for _, addr := range res.Changed {
				fmt.Fprintf(out, "  %s\n", addr)
			}
		default:
			fmt.Fprintf(out, "%s: clean\n", l.Name)
		}
	}
	switch {
	case failed > 0:
		return fmt.Errorf("%d of %s failed to plan", failed, words.Count(len(picked), "layer", "layers"))
	case drifted > 0:
		return &exitError{code: exitDrifted, msg: fmt.Sprintf("%d of %s drifted", drifted, words.Count(len(picked), "layer", "layers"))}
	}
	return nil
}
