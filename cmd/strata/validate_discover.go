package main

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/layers"
)

// listDiscovered validates a checkout without .strata.yaml: it is valid,
// and its layers are what discovery finds, listed so the operator sees what
// Strata will plan. A layer whose files do not parse is still a layer (its
// plan shows Terraform's error on the PR); it is named here first.
func listDiscovered(cmd *cobra.Command, dir string) error {
	dirs, err := terraform.Discover(dir)
	if err != nil {
		return err
	}
	found := layers.DiscoveredLayers(dirs)
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s has no %s: every directory with Terraform files that no other calls as a module is a layer, with defaults; %d found\n",
		dir, config.RepoFile, len(found))
	isLayer := map[string]bool{}
	for _, l := range found {
		isLayer[l.Dir] = true
		line := "  " + l.Dir
		if why := terraform.Unparseable(filepath.Join(dir, filepath.FromSlash(l.Dir))); why != "" {
			line += " (does not parse: " + strings.ReplaceAll(why, "\n", " ") + ")"
		}
		fmt.Fprintln(out, line)
	}
	for _, d := range dirs {
		if !isLayer[d] {
			fmt.Fprintf(out, "  %q holds Terraform files but its path cannot be a layer name: name it in %s\n", d, config.RepoFile)
		}
	}
	return nil
}

// warnUnpassedVars says once, at start, which TF_VAR_* variables of the
// server's environment Terraform will not get, and how to pass them: an
// operator who set one for the server would otherwise see it ignored
// without a word.
func warnUnpassedVars(log zerolog.Logger, cfg *config.Server, environ []string) {
	names := cfg.Terraform.UnpassedVars(environ)
	if len(names) == 0 {
		return
	}
	log.Warn().Strs("variables", names).Msg("TF_VAR_* variables of the server's environment are not passed to Terraform: " +
		"list them in terraform.env (STRATA_TERRAFORM_ENV) to pass them to every layer, " +
		"or set them for some layers in terraform.layers[].env (docs/credentials.md)")
}
