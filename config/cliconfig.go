package config

import (
	"fmt"
	"os"
	"path/filepath"

	"strata.dev/strata/engine/terraform"
)

// CLIConfigEnv sets terraform.cli_config.
const CLIConfigEnv = "STRATA_TERRAFORM_CLI_CONFIG"

// cliConfigProblems refuses a CLI config that Terraform could not read in
// a run: Strata passes it as TF_CLI_CONFIG_FILE and the sandbox opens it,
// with the mirrors it names, only if they exist.
func (t Terraform) cliConfigProblems() []string {
	f := t.CLIConfig
	if f == "" {
		return nil
	}
	key := "terraform.cli_config " + f
	if !filepath.IsAbs(f) {
		return []string{key + ": not an absolute path"}
	}
	for _, name := range t.Env {
		if name == "TF_CLI_CONFIG_FILE" {
			return []string{key + ": terraform.env passes TF_CLI_CONFIG_FILE too; keep one (cli_config)"}
		}
	}
	info, err := os.Stat(f)
	switch {
	case err != nil:
		return []string{fmt.Sprintf("%s: %v; create the file, or remove terraform.cli_config (%s)", key, err, CLIConfigEnv)}
	case !info.Mode().IsRegular():
		return []string{key + ": not a regular file"}
	}
	dirs, err := terraform.CLIConfigPaths(f)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", key, err)}
	}
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			out = append(out, fmt.Sprintf("%s: provider mirror %s: %v; create it, or remove it from the file", key, d, err))
		}
	}
	return out
}
