package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/spf13/cobra"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/layers"
	"strata.dev/strata/redact"
	"strata.dev/strata/words"
)

// strata run plan|apply: the engine of /plan and /apply on a local checkout,
// printing its report as text, the markdown comment a PR would get, or
// JSON, without GitHub or a store.
func init() {
	var r layersRun
	plan := &cobra.Command{
		Use:   "plan [LAYER...]",
		Short: "Plan layers of a checkout and print the report",
		Long: `Plan the named layers (by name or dir), or every layer, of the checkout
in --repo, the way /plan does: layers from .strata.yaml, or discovered
without it; Terraform from STRATA_TERRAFORM_BIN or PATH, OpenTofu (layers
with engine: tofu) from STRATA_TOFU_BIN or PATH.

stdout gets the report: --format text (the default, coloured when stdout
is a terminal and NO_COLOR is not set), markdown (the comment Strata would
post) or json (docs/cli.md). stderr gets Terraform's own output as it runs.

Exit status: 0 when every layer planned, 1 when one failed, 2 for a wrong
command line (an unknown layer lists the layers there are).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			r.names, r.apply = args, false
			_, err := runLayers(cmd, r)
			return err
		},
	}
	apply := &cobra.Command{
		Use:   "apply [LAYER...]",
		Short: "Plan, then apply exactly those plans, saying which layers were applied",
		Long: `Plan the named layers (by name or dir), or every layer, as strata run plan
does, then apply exactly those plans, layer after layer in the order
given (or of .strata.yaml).

stdout gets the results, in --format text (the default), markdown or json
(one document, at the end): the plan report, then for each layer whether
it was applied and, if not, why (its plan failed, no changes, refused
because a layer it depends on is not applied, an earlier layer failed, not
confirmed). stderr gets the progress: Terraform's output as it runs,
unmasked as terraform itself would print it, and the confirmation.

Before applying, the layers to apply are listed and "yes" is asked for
on stdin. --yes applies without asking; without it, a stdin that is not a
terminal is refused before anything is planned.

Exit status: 0 when every layer was applied or had no changes, 1 when one
was not, 2 for a wrong command line (or no --yes without a terminal).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			r.names, r.apply = args, true
			_, err := runLayers(cmd, r)
			return err
		},
	}
	apply.Flags().BoolVar(&r.yes, "yes", false, "apply without asking for confirmation")
	for _, c := range []*cobra.Command{plan, apply} {
		c.Flags().StringVar(&r.repoDir, "repo", ".", "the checkout's root")
		addFormatFlag(c, &r.format)
		runCmd.AddCommand(c)
	}
}

// layersRun is what `strata run plan|apply` is asked to do.
type layersRun struct {
	repoDir string
	names   []string // layers by name or dir; none is every layer
	apply   bool
	yes     bool   // apply without asking
	format  string // --format
}

// localLayers are the checkout's layers: its .strata.yaml's, or, without
// one, what discovery finds, as the server does.
func localLayers(root string) ([]config.Layer, error) {
	if _, err := os.Stat(filepath.Join(root, config.RepoFile)); errors.Is(err, os.ErrNotExist) {
		dirs, err := terraform.Discover(root)
		if err != nil {
			return nil, err
		}
		return layers.DiscoveredLayers(dirs), nil
	}
	repo, err := localRepo(root, "layers")
	if err != nil {
		return nil, err
	}
	return repo.Layers, nil
}

// localRun is a layer with the binary that runs it.
type localRun struct {
	layer config.Layer
	bin   string
	kind  terraform.Kind
}

// prepareLayers reads the checkout's layers, picks the named ones and
// finds each one's binary, before anything runs.
func prepareLayers(root string, names []string) ([]localRun, error) {
	all, err := localLayers(root)
	if err != nil {
		return nil, err
	}
	picked := all
	if len(names) > 0 {
		if picked, err = pickLayers(all, names, root); err != nil {
			return nil, err
		}
	}
	return withBinaries(picked)
}

func withBinaries(picked []config.Layer) ([]localRun, error) {
	runs := make([]localRun, len(picked))
	for i, l := range picked {
		bin, kind, err := localBinary(l)
		if err != nil {
			return nil, fmt.Errorf("layer %s: %w", l.Name, err)
		}
		runs[i] = localRun{layer: l, bin: bin, kind: kind}
	}
	return runs, nil
}

func (r localRun) setup(root string, log io.Writer) terraform.Setup {
	return terraform.Setup{WorkDir: filepath.Join(root, filepath.FromSlash(r.layer.Dir)), Root: root, Workspace: r.layer.Workspace,
		TerraformBin: r.bin, Kind: r.kind, Env: userEnv(), Log: log}
}

func runLayers(cmd *cobra.Command, r layersRun) ([]terraform.LayerReport, error) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	o, err := outputOf(cmd, r.format)
	if err != nil {
		return nil, err
	}
	if r.apply && !r.yes && !stdinIsTerminal(cmd.InOrStdin()) {
		return nil, usageError(cmd, errors.New("stdin is not a terminal, so there is no one to confirm the apply: pass --yes to apply without asking"))
	}
	root, err := filepath.Abs(r.repoDir)
	if err != nil {
		return nil, err
	}
	runs, err := prepareLayers(root, r.names)
	if err != nil {
		return nil, err
	}
	red, _ := redact.New(nil)
	var reports []terraform.LayerReport
	failed := false
	for _, run := range runs {
		sayLocalState(cmd.ErrOrStderr(), root, run.layer)
		res, err := terraform.Plan(ctx, terraform.PlanInput{Setup: run.setup(root, cmd.ErrOrStderr()), VarFiles: run.layer.VarFiles})
		if res != nil {
			red.Add(res.Sensitive...)
		}
		failed = failed || err != nil
		reports = append(reports, terraform.LayerReport{Layer: run.layer.Name, Dir: run.layer.Dir, Workspace: run.layer.Workspace, Result: res, Err: err})
	}
	out := cmd.OutOrStdout()
	if o.format != formatJSON || !r.apply {
		writePlanReport(out, o, runs, reports, red)
	}
	if !r.apply {
		if failed {
			return reports, errors.New("some layers failed to plan")
		}
		return reports, nil
	}
	outcomes := applyLayers(ctx, cmd, r.yes, root, runs, reports, red)
	writeApplyReport(out, o, runs, reports, outcomes, red)
	notApplied := 0
	for _, oc := range outcomes {
		if oc.state != applied && oc.state != noChanges {
			notApplied++
		}
	}
	if notApplied > 0 {
		return reports, fmt.Errorf("%d of %s not applied", notApplied, words.Count(len(outcomes), "layer", "layers"))
	}
	return reports, nil
}

// userEnv is Terraform's environment in a local run: the user's own, as
// their `terraform` would have it (credentials, HOME and its CLI config),
// less Strata's variables and those terraform-exec sets itself (TF_VAR_*
// among them). Local runs are not sandboxed: the checkout is the user's.
func userEnv() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "STRATA_") {
			env[k] = v
		}
	}
	return tfexec.CleanEnv(env)
}
