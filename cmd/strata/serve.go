package main

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"strata.dev/strata/app"
	"strata.dev/strata/config"
	"strata.dev/strata/words"
)

func init() {
	var configPath string
	var heartbeat time.Duration
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve GitHub webhooks and run jobs",
		Long: `Serve GitHub webhooks at POST /api/github/hook and run the jobs they start.

Configuration comes from --config and STRATA_* environment variables
(environment wins); a STRATA_* variable Strata does not know stops it,
naming the one meant. The log goes to stderr: JSON lines, or text with
STRATA_LOG_FORMAT=text; STRATA_LOG_LEVEL=debug|info|warn|error. Without GitHub App credentials the server starts in
setup mode and prints the URL of a page that registers the App; the URL
carries a one-time token, and the page opens only with it.`,
		Args: usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := config.CheckEnv(os.Environ()); err != nil {
				return err
			}
			cfg, err := config.LoadServer(configPath, os.LookupEnv)
			if err != nil {
				return err
			}
			log := app.NewLogger(cmd.ErrOrStderr(), cfg.Log, colorOn(writerIsTerminal(cmd.ErrOrStderr()), os.Getenv("NO_COLOR"), os.Getenv("TERM")))
			warnUnpassedVars(log, cfg, os.Environ())
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGTERM, os.Interrupt)
			defer stop()
			srv, err := app.New(ctx, cfg, log, app.Options{Heartbeat: heartbeat})
			if err != nil {
				return err
			}
			return srv.Run(ctx)
		},
	}
	cmd.Flags().StringVar(&configPath, "config", "", "YAML config file")
	cmd.Flags().DurationVar(&heartbeat, "heartbeat", 10*time.Second, "how often running jobs report alive; a job silent for 6 beats is recovered")
	cmd.Flags().MarkHidden("heartbeat")
	root.AddCommand(cmd)

	var validatePath string
	validate := &cobra.Command{
		Use:   "validate [DIR]",
		Short: "Check the server config and the checkout's .strata.yaml, or DIR's .strata.yaml",
		Long: `Without DIR: check what strata serve would refuse at start (STRATA_*
variables it does not know, the server config of --config and the
environment, the App credentials the setup page stored) and, when the
current directory has a .strata.yaml, that file too. With DIR: check DIR's
.strata.yaml, or list the layers discovery finds when it has none. Each
line says which file it validated.`,
		Args: usageArgs(atMostOne("DIR")),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := config.CheckEnv(os.Environ()); err != nil {
				return err
			}
			if len(args) == 1 {
				return validateRepo(cmd, args[0])
			}
			// What serve refuses, this refuses: the config, then the
			// App credentials the setup page stored.
			cfg, err := config.LoadServer(validatePath, os.LookupEnv)
			if err == nil {
				err = cfg.UseStoredCredentials()
			}
			if err != nil {
				return err
			}
			from := "no --config file: the STRATA_* environment and defaults"
			if validatePath != "" {
				from = validatePath + " and the STRATA_* environment"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "server config is valid (%s)\n", from)
			if _, err := os.Stat(config.RepoFile); err == nil {
				return validateRepo(cmd, ".")
			}
			return nil
		},
	}
	validate.Flags().StringVar(&validatePath, "config", "", "YAML server config file")
	configCmd := &cobra.Command{Use: "config", Short: "Configuration tools", Args: cobra.ArbitraryArgs, RunE: requireSubcommand}
	configCmd.AddCommand(validate)
	root.AddCommand(configCmd)
}

func validateRepo(cmd *cobra.Command, dir string) error {
	file := filepath.Join(dir, config.RepoFile)
	data, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return listDiscovered(cmd, dir)
	}
	if err != nil {
		return err
	}
	repo, err := config.ParseRepo(file, data)
	if err != nil {
		return err
	}
	if err := repo.Validate(config.DirFS(dir)); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s is valid: %s, %s, %s\n", file, words.Count(len(repo.Layers), "layer", "layers"),
		words.Count(len(repo.Syncs), "sync", "syncs"), words.Count(len(repo.Releases), "release", "releases"))
	return nil
}
