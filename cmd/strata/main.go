// Command strata is the Strata server and its local tools.
//
// Results (reports, summaries, validation results, the version) go to
// stdout; logs and progress (the server's log, Terraform's output as it
// runs, prompts) go to stderr. Exit status: 0 on success, 1 when the work
// failed, 2 when the command line is wrong (unknown command or flag, wrong
// arguments); `strata run drift` also exits 2 when a layer drifted.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"strata.dev/strata/words"
)

// exitUsage is the exit status of a wrong command line.
const exitUsage = 2

var root = &cobra.Command{
	Use:           "strata",
	Short:         "Strata turns pull requests into the control plane for infrastructure",
	SilenceUsage:  true,
	SilenceErrors: true,
	Args:          cobra.ArbitraryArgs,
	RunE:          requireSubcommand,
}

// runCmd groups the local runs of the engine (strata run plan|apply|helm-test).
var runCmd = &cobra.Command{
	Use:   "run",
	Short: "Run Strata's engine on a local checkout, without GitHub",
	Args:  cobra.ArbitraryArgs,
	RunE:  requireSubcommand,
}

func init() {
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(c, err) })
	root.AddCommand(runCmd)
}

func main() {
	os.Exit(execute(context.Background(), os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// execute runs the command line and says how it ended, on stderr and as
// the exit status.
func execute(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return 0
	}
	fmt.Fprintln(stderr, "strata:", err)
	var exit *exitError
	if errors.As(err, &exit) {
		return exit.code
	}
	return 1
}

// requireSubcommand is the RunE of commands that only group others:
// without it cobra prints their help and exits 0 for a mistyped
// subcommand, and a script goes on as if it had run.
func requireSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return cmd.Help()
	}
	if cmd.SuggestionsMinimumDistance <= 0 {
		cmd.SuggestionsMinimumDistance = 2 // cobra's own default, set where it suggests
	}
	hint := ""
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		hint = fmt.Sprintf(` (did you mean "%s"?)`, strings.Join(s, `" or "`))
	}
	return usageError(cmd, fmt.Errorf("unknown command %q for %q%s", args[0], cmd.CommandPath(), hint))
}

// usageArgs makes an argument check's error a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError(cmd, err)
		}
		return nil
	}
}

// exactlyOne wants one argument, named what ("RELEASE"), and says so in
// words (cobra's own message is "accepts 1 arg(s), received 0").
func exactlyOne(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 {
			return fmt.Errorf("%s takes one %s, got %s", cmd.CommandPath(), what, words.Count(len(args), "argument", "arguments"))
		}
		return nil
	}
}

// atMostOne takes one argument, what, or none.
func atMostOne(what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) > 1 {
			return fmt.Errorf("%s takes at most one %s, got %s", cmd.CommandPath(), what, words.Count(len(args), "argument", "arguments"))
		}
		return nil
	}
}

// usageError ends the command with exitUsage, pointing at its help.
func usageError(cmd *cobra.Command, err error) error {
	msg := strings.TrimSpace(err.Error())
	return &exitError{code: exitUsage, msg: fmt.Sprintf("%s\nRun '%s --help' for usage.", msg, cmd.CommandPath())}
}
