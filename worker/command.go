package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"strata.dev/strata/access"
	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
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

// Work asks the permission table first, from the command and the user's
// permission alone (one GitHub call), so a comment by someone who may not
// run it costs no reaction, no read of the PR and no load of its config,
// and gets no reply about the config. Only then it reacts, reads and runs.
func (w *CommandWorker) Work(ctx context.Context, job *river.Job[jobs.Command]) error {
	a, d := job.Args, w.rt.d
	cmd, perr := command.Parse(a.Body)
	var usage *command.UsageError
	name := ""
	switch {
	case errors.As(perr, &usage):
		name = usage.Command
	case perr == nil && cmd != nil:
		name = cmd.Name()
	default:
		return nil // the handler only enqueues commands; nothing else to do
	}
	repo, err := d.Repo(a.Repo)
	if err != nil {
		return err
	}
	decision, err := d.Authorize(ctx, repo, a.User, name)
	if err != nil {
		return err
	}
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	if !decision.Allowed {
		return w.refuse(ctx, repo, rep, a, name, cmd, decision)
	}
	// The 👀 goes first, once: a retried job must not react twice.
	if a.CommentID != 0 && job.Attempt == 1 {
		if err := rep.React(ctx, a.CommentID, "eyes"); err != nil {
			return err
		}
	}
	if usage != nil {
		_, err := rep.Comment(ctx, a.PR, fmt.Sprintf("@%s %s", a.User, usage.Error()))
		return err
	}
	cc, bad, err := w.read(ctx, repo, rep, a)
	if bad != nil {
		return cc.Reply(ctx, ConfigErrorComment(bad))
	}
	if err != nil {
		return err
	}
	f, ok := w.rt.commands[cmd.Name()]
	if !ok {
		return cc.Reply(ctx, fmt.Sprintf("@%s `/%s` is not available on this Strata server.", a.User, cmd.Name()))
	}
	return f.Run(ctx, cc, cmd)
}

// read gathers what a command runs on: the PR and its config; bad is why
// the config cannot be used (cc has the PR, not the config).
func (w *CommandWorker) read(ctx context.Context, repo *pull.GitHubRepo, rep *report.Reporter, a jobs.Command) (cc *CommandContext, bad config.RepoErrors, err error) {
	pr, err := repo.PR(ctx, a.PR)
	if err != nil {
		return nil, nil, err
	}
	cc = &CommandContext{Job: a, Reporter: rep, PR: pr}
	cc.Config, err = w.rt.d.LoadRepoConfig(ctx, pr, pr.HeadSHA(), pr.DefaultBranch())
	if errors.As(err, &bad) {
		return cc, bad, nil
	}
	return cc, nil, err
}

// refuse tells the user the table refused them: nothing to a user without
// any permission, a reply to others. A command whose refusal shows on its
// checks (an /apply) reads the PR and its config to find them; when the
// config cannot be used it only replies: the config's errors are for those
// who may run the command.
func (w *CommandWorker) refuse(ctx context.Context, repo *pull.GitHubRepo, rep *report.Reporter, a jobs.Command, name string, cmd command.Command, d access.Decision) error {
	if d.Quiet {
		zerolog.Ctx(ctx).Info().Str("user", a.User).Str("command", name).Str("reason", d.Reason).Msg("command refused without a reply")
		return nil
	}
	f := w.rt.commands[name]
	if cmd == nil || f.Refuse == nil {
		_, err := rep.Comment(ctx, a.PR, fmt.Sprintf("@%s `/%s` refused: %s", a.User, name, d.Reason))
		return err
	}
	cc, bad, err := w.read(ctx, repo, rep, a)
	if bad != nil {
		return cc.Reply(ctx, fmt.Sprintf("@%s `/%s` refused: %s", a.User, name, d.Reason))
	}
	if err != nil {
		return err
	}
	return f.Refuse(ctx, cc, cmd, d.Reason)
}

// Authorize asks the permission table whether user may run command on the
// repository, from the user's permission (one GitHub call, cached for the
// job). Every command, button and web UI action asks here.
func (d *Deps) Authorize(ctx context.Context, repo pull.Repository, user, command string) (access.Decision, error) {
	policy := access.Policy{Plan: pull.Permission(d.Config.PlanPermission), Apply: pull.Permission(d.Config.ApplyPermission)}
	perm, err := repo.Permission(ctx, user)
	if err != nil {
		return access.Decision{}, err
	}
	return access.Decide(command, access.Subject{User: user, Permission: perm}, policy), nil
}

// ConfigErrorComment says on a PR why its .strata.yaml cannot be used.
func ConfigErrorComment(errs config.RepoErrors) string {
	var b strings.Builder
	b.WriteString("**Strata could not use `" + config.RepoFile + "`:**\n\n")
	for _, e := range errs {
		b.WriteString("- " + markdown.Quote(e.Error()) + "\n")
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
		fmt.Fprintf(&b, "**%s:** %s\n\n", title, report.Names(names))
	}
	var layers, syncs, releases []string
	for _, l := range c.Config.Layers {
		layers = append(layers, l.Name+" ("+l.Dir+")")
	}
	for _, s := range c.Config.Syncs {
		syncs = append(syncs, syncEntry(s))
	}
	for _, r := range c.Config.Releases {
		releases = append(releases, r.Name)
	}
	list("Layers", layers)
	b.WriteString(requirementsHelp(c.Config.Layers))
	b.WriteString(onMergeHelp(c.Config.Layers))
	list("Syncs", syncs)
	list("Releases", releases)
	helpDiscovery(&b, c.Config)
	return c.Reply(ctx, b.String())
}
