package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/policy"
	"strata.dev/strata/redact"
	"strata.dev/strata/words"
)

// Exit code of `strata run policy` when a block set denies a plan.
const exitDenied = 2

// strata run policy: the policy sets of the checkout's .strata.yaml over
// a plan's JSON, as the server judges a PR's plans (docs/governance.md).
func init() {
	var repoDir, planJSON string
	cmd := &cobra.Command{
		Use:   "policy [LAYER...]",
		Short: "Evaluate the layers' policy sets over their plans",
		Long: `Evaluate the policy sets of the checkout in --repo (.strata.yaml policies:,
as checked out: local edits count here, unlike on the server, where only the
default branch's do) over each named layer's plan, or every layer's. Each
layer is planned as strata run plan does, or --plan-json FILE (terraform show
-json of a saved plan) is evaluated for the one layer named. Every denial and
warning is printed with its address and message.

Exit status: 0 when no block set denies a plan, 2 when one does, 1 when a
plan or a set failed (a Rego error is printed with its file and line).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			return runPolicy(ctx, cmd.OutOrStdout(), repoDir, planJSON, args)
		},
	}
	cmd.Flags().StringVar(&repoDir, "repo", ".", "the checkout's root")
	cmd.Flags().StringVar(&planJSON, "plan-json", "", "a plan's JSON (terraform show -json) to evaluate instead of planning; needs one layer")
	runCmd.AddCommand(cmd)
}

func runPolicy(ctx context.Context, out io.Writer, repoDir, planJSON string, names []string) error {
	root, err := filepath.Abs(repoDir)
	if err != nil {
		return err
	}
	repo, err := localRepo(root, "policies")
	if err != nil {
		return err
	}
	if len(repo.Policies) == 0 {
		return fmt.Errorf("%s defines no policy sets (policies: [{name, path, owners, enforcement}])", config.RepoFile)
	}
	picked := repo.Layers
	if len(names) > 0 {
		if picked, err = pickLayers(repo.Layers, names, root); err != nil {
			return err
		}
	}
	if planJSON != "" && len(picked) != 1 {
		return &exitError{code: exitDenied, msg: "--plan-json evaluates one layer's plan: name that layer"}
	}
	tree, err := os.OpenRoot(root)
	if err != nil {
		return err
	}
	defer tree.Close()
	red, _ := redact.New(nil)
	denied, failed := 0, 0
	for _, l := range picked {
		sets, unknown := config.PolicySetsOf(l, repo.Policies)
		for _, u := range unknown {
			fmt.Fprintf(out, "%s: set %s is not defined in %s\n", l.Name, u, config.RepoFile)
			failed++
		}
		if len(sets) == 0 {
			continue
		}
		doc, err := layerPlanJSON(ctx, root, l, planJSON, red)
		if err != nil {
			fmt.Fprintf(out, "%s: %v\n", l.Name, err)
			failed++
			continue
		}
		for _, s := range sets {
			files, err := policy.Load(tree.FS(), s.Path)
			var res *policy.Result
			if err == nil {
				res, err = policy.Evaluate(ctx, files, doc, policy.Options{})
			}
			if err != nil {
				fmt.Fprintf(out, "%s: set %s (%s) failed:\n%s\n", l.Name, s.Name, s.Enforcement, red.String(err.Error()))
				failed++
				continue
			}
			fmt.Fprintf(out, "%s: set %s (%s): %s, %s\n", l.Name, s.Name, s.Enforcement,
				words.Count(len(res.Denials), "denial", "denials"), words.Count(len(res.Warnings), "warning", "warnings"))
			for _, f := range append(res.Denials, res.Warnings...) {
				addr := f.Address
				if addr == "" {
					addr = "-"
				}
				fmt.Fprintf(out, "  %s %s: %s\n", f.Kind, addr, red.String(markdown.Head(f.Msg, 2000)))
			}
			if len(res.Denials) > 0 && s.Enforcement == config.Block {
				denied++
			}
		}
	}
	switch {
	case failed > 0:
		return fmt.Errorf("%s failed", words.Count(failed, "plan or policy set", "plans or policy sets"))
	case denied > 0:
		return &exitError{code: exitDenied, msg: fmt.Sprintf("%s denied a plan", words.Count(denied, "block set", "block sets"))}
	}
	return nil
}

// layerPlanJSON is the plan's JSON: read from file, or made by planning
// the layer as strata run plan does.
func layerPlanJSON(ctx context.Context, root string, l config.Layer, file string, red *redact.Redactor) ([]byte, error) {
	if file != "" {
		st, err := os.Stat(file)
		if err != nil {
			return nil, err
		}
		if st.Size() > policy.MaxPlanJSON {
			return nil, fmt.Errorf("%s is larger than the %d MiB policies evaluate", file, policy.MaxPlanJSON>>20)
		}
		return os.ReadFile(file)
	}
	runs, err := withBinaries([]config.Layer{l})
	if err != nil {
		return nil, err
	}
	// The policies always judge the plan here: its JSON is kept.
	keep := func() int64 { return policy.MaxPlanJSON }
	res, err := terraform.Plan(ctx, terraform.PlanInput{Setup: runs[0].setup(root, nil), VarFiles: l.VarFiles, KeepJSON: keep})
	if err != nil {
		return nil, err
	}
	red.Add(res.Sensitive...)
	if res.JSONTooLarge {
		return nil, fmt.Errorf("the plan's JSON is larger than the %d MiB policies evaluate", policy.MaxPlanJSON>>20)
	}
	return res.JSON, nil
}
