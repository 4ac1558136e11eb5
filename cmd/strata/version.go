package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"strata.dev/strata/config"
	"strata.dev/strata/sandbox"
)

// strata version: the build, and whether this host runs Terraform
// sandboxed, as the server would with the same config.
func init() {
	var configPath string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print Strata's version and whether Terraform runs sandboxed",
		Long: `Print Strata's version, and the sandbox Terraform runs in on this host:
"landlock ABI N", "off (server config)", or "unavailable" (the server
refuses to plan until the kernel has Landlock or the server config says
terraform.sandbox: off).`,
		Args: usageArgs(cobra.NoArgs),
		Run: func(cmd *cobra.Command, _ []string) {
			out := cmd.OutOrStdout()
			fmt.Fprintln(out, "strata", version)
			cfg, err := config.LoadServer(configPath, os.LookupEnv)
			if err != nil {
				fmt.Fprintln(out, "sandbox:", sandbox.Detect(false), "(server config not read:", err.Error()+")")
				return
			}
			fmt.Fprintln(out, "sandbox:", sandbox.Detect(cfg.Terraform.SandboxOff()))
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML server config file")
	root.AddCommand(cmd)
}
