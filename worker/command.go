package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/riverqueue/river"

	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
)

// CommandWorker reacts to a command, loads the repo config at the PR head and
// hands the command to the code that does it.
type CommandWorker struct {
	river.WorkerDefaults[jobs.Command]
	d *Deps
}

func (w *CommandWorker) Timeout(*river.Job[jobs.Command]) time.Duration { return jobs.CommandTimeout }

// CommandContext is what a command's implementation gets.
type CommandContext struct {
	Job      jobs.Command
	Deps     *Deps
	GitHub   *github.Client
	Reporter *report.Reporter
	PR       *github.PullRequest
	Config   *RepoConfig
}

// Reply comments on the PR.
func (c *CommandContext) Reply(ctx context.Context, body string) error {
	_, err := c.Reporter.Comment(ctx, c.Job.PR, body)
	return err
}

// CommandFunc carries out one kind of command.
type CommandFunc func(ctx context.Context, c *CommandContext, cmd command.Command) error

// commands maps a command name to what does it. Features add theirs.
var commands = map[string]CommandFunc{
	"help": help,
}

// HandleCommand registers what carries out a command.
func HandleCommand(name string, f CommandFunc) { commands[name] = f }

func (w *CommandWorker) Work(ctx context.Context, job *river.Job[jobs.Command]) error {
	a := job.Args
	rep, err := w.d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	// The 👀 goes first, once: a retried job must not react twice.
	if a.CommentID != 0 && job.Attempt == 1 {
		if err := rep.React(ctx, a.CommentID, "eyes"); err != nil {
			return err
		}
	}
	cmd, perr := command.Parse(a.Body)
	var usage *command.UsageError
	if errors.As(perr, &usage) {
		_, err := rep.Comment(ctx, a.PR, fmt.Sprintf("@%s %s", a.User, usage.Error()))
		return err
	}
	if perr != nil || cmd == nil {
		return nil // the handler only enqueues commands; nothing else to do
	}
	gh := rep.REST
	pr, _, err := gh.PullRequests.Get(ctx, a.Owner, a.Name, a.PR)
	if err != nil {
		return fmt.Errorf("%s#%d: %w", a.FullName, a.PR, err)
	}
	cc := &CommandContext{Job: a, Deps: w.d, GitHub: gh, Reporter: rep, PR: pr}
	cfg, err := LoadRepoConfig(ctx, gh, a.Owner, a.Name, pr.GetHead().GetSHA(), pr.GetBase().GetRepo().GetDefaultBranch())
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		return cc.Reply(ctx, configErrorComment(bad))
	}
	if err != nil {
		return err
	}
	cc.Config = cfg
	f, ok := commands[cmd.Name()]
	if !ok {
		return cc.Reply(ctx, fmt.Sprintf("@%s `/%s` is not available on this Strata server.", a.User, cmd.Name()))
	}
	return f(ctx, cc, cmd)
}

func configErrorComment(errs config.RepoErrors) string {
	var b strings.Builder
	b.WriteString("**Strata could not use `" + config.RepoFile + "`:**\n\n")
	for _, e := range errs {
		fmt.Fprintf(&b, "- `%s`\n", e.Error())
	}
	b.WriteString("\nFix the file and comment again.")
	return b.String()
}

// help answers /help with the usage and what this repository defines.
func help(ctx context.Context, c *CommandContext, _ command.Command) error {
	var b strings.Builder
	b.WriteString("### Strata commands\n\n")
	b.WriteString(command.Usage())
	b.WriteString("\n\n### In this repository\n\n")
	if !c.Config.Present {
		b.WriteString("_No `" + config.RepoFile + "`: every directory with Terraform files that is not only a module is a layer._\n\n")
	}
	list := func(title string, names []string) {
		fmt.Fprintf(&b, "**%s:** ", title)
		if len(names) == 0 {
			b.WriteString("none\n\n")
			return
		}
		b.WriteString("`" + strings.Join(names, "`, `") + "`\n\n")
	}
	var layers, syncs, releases []string
	for _, l := range c.Config.Layers {
		layers = append(layers, l.Name+" ("+l.Dir+")")
	}
	for _, s := range c.Config.Syncs {
		syncs = append(syncs, s.Name)
	}
	for _, r := range c.Config.Releases {
		releases = append(releases, r.Name)
	}
	list("Layers", layers)
	list("Syncs", syncs)
	list("Releases", releases)
	return c.Reply(ctx, b.String())
}
