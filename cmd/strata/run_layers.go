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
	var repoDir string
	plan := &cobra.Command{
		Use:   "plan [LAYER...]",
		Short: "Plan layers of a checkout and print the report a PR would get",
		Long: `Plan the named layers (by name or dir), or every layer, of the checkout
in --repo, the way /plan does: layers from .strata.yaml, or discovered
without it; Terraform from STRATA_TERRAFORM_BIN or PATH, OpenTofu (layers
with engine: tofu) from STRATA_TOFU_BIN or PATH. Prints the markdown
comment Strata would post.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := runLayers(cmd, repoDir, args, false)
			return err
		},
	}
	apply := &cobra.Command{
		Use:   "apply [LAYER...]",
		Short: "Plan, then apply exactly those plans, printing both reports",
		RunE: func(cmd *cobra.Command, args []string) error {
			_, err := runLayers(cmd, repoDir, args, true)
			return err
		},
	}
	for _, c := range []*cobra.Command{plan, apply} {
		c.Flags().StringVar(&repoDir, "repo", ".", "the checkout's root")
		runCmd.AddCommand(c)
	}
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

func runLayers(cmd *cobra.Command, repoDir string, names []string, apply bool) ([]terraform.LayerReport, error) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	root, err := filepath.Abs(repoDir)
	if err != nil {
		return nil, err
	}
	layers, err := localLayers(root)
	if err != nil {
		return nil, err
	}
	if len(names) > 0 {
		var picked []config.Layer
		for _, n := range names {
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
			Setup:    terraform.Setup{WorkDir: filepath.Join(root, filepath.FromSlash(l.Dir)), Root: root, Workspace: l.Workspace, TerraformBin: bin, Kind: kind, Env: userEnv()},
			VarFiles: l.VarFiles,
		})
		if res != nil {
			red.Add(res.Sensitive...)
		}
		failed = failed || err != nil
		reports = append(reports, terraform.LayerReport{Layer: l.Name, Result: res, Err: err})
	}
	fmt.Fprintln(cmd.OutOrStdout(), red.String(terraform.Comment(reports)))
	if failed {
		return reports, errors.New("some layers failed to plan")
	}
	if !apply {
		return reports, nil
	}
	fmt.Fprintln(cmd.OutOrStdout(), "\n**Terraform apply:**")
	for i, l := range layers {
		r := reports[i].Result
		if !r.HasChanges {
			fmt.Fprintf(cmd.OutOrStdout(), "\n- `%s`: no changes\n", l.Name)
			continue
		}
		bin, kind := localBinary(l)
		res, err := terraform.Apply(ctx, terraform.ApplyInput{
			Setup:    terraform.Setup{WorkDir: filepath.Join(root, filepath.FromSlash(l.Dir)), Root: root, Workspace: l.Workspace, TerraformBin: bin, Kind: kind, Env: userEnv()},
			PlanFile: r.PlanFile,
		})
		if err != nil {
			fmt.Fprintf(cmd.OutOrStdout(), "\n- ❌ `%s`: %s\n", l.Name, red.String(err.Error()))
			return reports, fmt.Errorf("apply %s: %w", l.Name, err)
		}
		fmt.Fprintf(cmd.OutOrStdout(), "\n<details><summary>✅ <b>%s</b>: applied</summary>\n\n```\n%s\n```\n</details>\n", l.Name, red.String(res.Text))
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
