package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/access"
	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
)

// CommandWorker reacts to a command, loads the repo config at the PR head and
// hands the command to the code that does it.
type CommandWorker struct {
	river.WorkerDefaults[jobs.Command]
	rt *Runtime
}

func (w *CommandWorker) Timeout(*river.Job[jobs.Command]) time.Duration { return jobs.CommandTimeout }

// CommandContext is what a command's implementation gets.
type CommandContext struct {
	Job      jobs.Command
	Reporter *report.Reporter
	// PR is the pull request's facts, read once for this job.
	PR     pull.Context
	Config *RepoConfig
}

// Reply comments on the PR.
func (c *CommandContext) Reply(ctx context.Context, body string) error {
	_, err := c.Reporter.Comment(ctx, c.Job.PR, body)
	return err
}

// CommandFunc carries out one kind of command.
type CommandFunc func(ctx context.Context, c *CommandContext, cmd command.Command) error

// RefuseFunc tells the user that the permission table refused a command,
// where the command would have reported (its checks); reason says why.
type RefuseFunc func(ctx context.Context, c *CommandContext, cmd command.Command, reason string) error

// Command is what a feature does with one command: Run it once the
// permission table allowed it, or Refuse it (a reply when nil).
type Command struct {
	Run    CommandFunc
	Refuse RefuseFunc
}

func (w *CommandWorker) Work(ctx context.Context, job *river.Job[jobs.Command]) error {
	a, d := job.Args, w.rt.d
	rep, err := d.Reporter(a.Repo)
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
	pr, err := d.PR(ctx, a.Repo, a.PR)
	if err != nil {
		return err
	}
	cc := &CommandContext{Job: a, Reporter: rep, PR: pr}
	cfg, err := d.LoadRepoConfig(ctx, pr, pr.HeadSHA(), pr.DefaultBranch())
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		return cc.Reply(ctx, ConfigErrorComment(bad))
	}
	if err != nil {
		return err
	}
	cc.Config = cfg
	f, ok := w.rt.commands[cmd.Name()]
	if !ok {
		return cc.Reply(ctx, fmt.Sprintf("@%s `/%s` is not available on this Strata server.", a.User, cmd.Name()))
	}
	decision, err := d.Authorize(ctx, pr, a.User, cmd.Name())
	if err != nil {
		return err
	}
	if !decision.Allowed {
		if f.Refuse != nil {
			return f.Refuse(ctx, cc, cmd, decision.Reason)
		}
		return cc.Reply(ctx, fmt.Sprintf("@%s `/%s` refused: %s", a.User, cmd.Name(), decision.Reason))
	}
	return f.Run(ctx, cc, cmd)
}

// Authorize asks the permission table whether user may run command on the
// PR, reading the user's permission only when the table needs it. Every
// command, button and web UI action asks here.
func (d *Deps) Authorize(ctx context.Context, pr pull.Context, user, command string) (access.Decision, error) {
	policy := access.Policy{Plan: pull.Permission(d.Config.PlanPermission), Apply: pull.Permission(d.Config.ApplyPermission)}
	s := access.Subject{User: user, Permission: pull.None, Fork: pr.Fork(),
		Author: strings.EqualFold(user, pr.Author())}
	if access.Need(command, policy) != pull.None {
		perm, err := pr.Permission(ctx, user)
		if err != nil {
			return access.Decision{}, err
		}
		s.Permission = perm
	}
	return access.Decide(command, s, policy), nil
}

// ConfigErrorComment says on a PR why its .strata.yaml cannot be used.
func ConfigErrorComment(errs config.RepoErrors) string {
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
