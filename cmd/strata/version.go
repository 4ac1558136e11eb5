package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"strata.dev/strata/config"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/version"
)

// strata version: the build, and whether this host runs Terraform
// sandboxed, as the server would with the same config.
func init() {
	var configPath string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print Strata's version and whether Terraform runs sandboxed",
		Long: `Print Strata's version, and the sandbox Terraform runs in on this host
with the server config: for each protection the sandbox promises, what
keeps it here (Landlock ABI N, a separate uid, no capabilities, seccomp, a
PID namespace, the supervisor) or that it is MISSING. With
terraform.sandbox: on (the default) the server refuses to plan when one is
missing; best_effort plans and says so in every run's log; off runs
Terraform unconfined.`,
		Args: usageArgs(cobra.NoArgs),
		Run: func(cmd *cobra.Command, _ []string) {
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "strata", version.String())
			// Which binary starts Terraform: strata-sandbox beside this one,
			// or this one (slower to start), a release's files incomplete.
			if l, err := sandbox.Launcher(); err == nil {
				defer fmt.Fprintln(out, "sandbox launcher:", l)
			}
			cfg, err := config.LoadServer(configPath, os.LookupEnv)
			if err != nil {
				fmt.Fprintln(out, "server config not read:", err.Error()+"; the sandbox with its defaults:")
				fmt.Fprint(out, sandbox.Detect(sandbox.Settings{}).Table())
				return
			}
			fmt.Fprint(out, sandbox.Detect(cfg.Terraform.SandboxSettings()).Table())
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML server config file")
	root.AddCommand(cmd)
}
