// Command strata is the Strata server and its local tools.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

var root = &cobra.Command{
	Use:           "strata",
	Short:         "Strata turns pull requests into the control plane for infrastructure",
	SilenceUsage:  true,
	SilenceErrors: true,
}

// runCmd groups the local runs of the engine (strata run plan|apply|helm-test).
var runCmd = &cobra.Command{
	Use:   "run",
	Short: "Run Strata's engine on a local checkout, without GitHub",
}

func main() {
	root.AddCommand(runCmd)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "strata:", err)
		var exit *exitError
		if errors.As(err, &exit) {
			os.Exit(exit.code)
		}
		os.Exit(1)
	}
}
