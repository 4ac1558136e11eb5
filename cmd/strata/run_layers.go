package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
	"github.com/spf13/cobra"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/layers"
	"strata.dev/strata/redact"
)

// strata run plan|apply: the engine of /plan and /apply on a local checkout,
// printing the same markdown report, without GitHub or a store.
func init() {
	var r layersRun
	plan := &cobra.Command{
		Use:   "plan [LAYER...]",
		Short: "Plan layers of a checkout and print the report a PR would get",
		Long: `Plan the named layers (by name or dir), or every layer, of the checkout
in --repo, the way /plan does: layers from .strata.yaml, or discovered
without it; Terraform from STRATA_TERRAFORM_BIN or PATH, OpenTofu (layers
with engine: tofu) from STRATA_TOFU_BIN or PATH. Prints the markdown
comment Strata would post on stdout; Terraform's own output streams to
stderr as it runs.`,
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

stdout gets the results: the plan report, then one line per layer saying
whether it was applied and, if not, why (its plan failed, no changes,
refused because a layer it depends on is not applied, an earlier layer
failed, not confirmed). stderr gets the progress: Terraform's output as it
runs, unmasked as terraform itself would print it, and the confirmation.

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
		runCmd.AddCommand(c)
	}
}

// layersRun is what `strata run plan|apply` is asked to do.
type layersRun struct {
	repoDir string
	names   []string // layers by name or dir; none is every layer
	apply   bool
	yes     bool // apply without asking
}

func localLayers(root string) ([]config.Layer, error) {
	data, err := os.ReadFile(filepath.Join(root, config.RepoFile))
	if errors.Is(err, os.ErrNotExist) {
		dirs, err := terraform.Discover(root)
		if err != nil {
			return nil, err
		}
		return layers.DiscoveredLayers(dirs), nil
	}
	if err != nil {
		return nil, err
	}
	repo, err := config.ParseRepo(config.RepoFile, data)
	if err != nil {
		return nil, err
	}
	if err := repo.Validate(config.DirFS(root)); err != nil {
		return nil, err
	}
	return repo.Layers, nil
}

func runLayers(cmd *cobra.Command, r layersRun) ([]terraform.LayerReport, error) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	if r.apply && !r.yes && !stdinIsTerminal(cmd.InOrStdin()) {
		return nil, usageError(cmd, errors.New("stdin is not a terminal, so there is no one to confirm the apply: pass --yes to apply without asking"))
	}
	root, err := filepath.Abs(r.repoDir)
	if err != nil {
		return nil, err
	}
	layers, err := localLayers(root)
	if err != nil {
		return nil, err
	}
	if len(r.names) > 0 {
		var picked []config.Layer
		for _, n := range r.names {
			found := false
			for _, l := range layers {
				if l.Name == n || l.Dir == n {
					picked, found = append(picked, l), true
				}
			}
			if !found {
				return nil, fmt.Errorf("no layer %q in %s", n, root)
			}
		}
		layers = picked
	}
	red, _ := redact.New(nil)
	var reports []terraform.LayerReport
	failed := false
	for _, l := range layers {
		bin, kind := localBinary(l)
		res, err := terraform.Plan(ctx, terraform.PlanInput{
			Setup:    terraform.Setup{WorkDir: filepath.Join(root, filepath.FromSlash(l.Dir)), Root: root, Workspace: l.Workspace, TerraformBin: bin, Kind: kind, Env: userEnv(), Log: cmd.ErrOrStderr()},
			VarFiles: l.VarFiles,
		})
		if res != nil {
			red.Add(res.Sensitive...)
		}
		failed = failed || err != nil
		reports = append(reports, terraform.LayerReport{Layer: l.Name, Result: res, Err: err})
	}
	fmt.Fprintln(cmd.OutOrStdout(), red.String(terraform.Comment(reports)))
	if !r.apply {
		if failed {
			return reports, errors.New("some layers failed to plan")
		}
		return reports, nil
	}
	return reports, applyLayers(ctx, cmd, r.yes, root, layers, reports, red)
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
