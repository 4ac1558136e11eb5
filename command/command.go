// Package command parses Strata's pull request comment commands.
//
// A comment holds at most one command: its first non-blank line, when that line
// starts with "/". Arguments are whitespace-separated words and are only ever
// used as names and durations; nothing from a comment reaches a shell.
//
// Command names are case-sensitive: "/Plan" is not Strata's and is ignored, as
// GitHub users expect of bots (and other bots may own other spellings).
package command

import (
	"fmt"
	"strata.dev/strata/words"
	"strings"
	"time"
)

// Command is one parsed Strata command.
type Command interface {
	// Name is the command word without the slash, e.g. "plan".
	Name() string
	// String renders the command so that Parse(c.String()) returns an equal value.
	String() string
}

// Plan plans the named layers, or every layer the PR touches when Layers is empty.
type Plan struct{ Layers []string }

// Apply applies the saved plans of the named layers, or all planned layers.
type Apply struct{ Layers []string }

// Unlock releases this PR's locks on the named layers (all when empty).
type Unlock struct{ Layers []string }

// Cancel stops this PR's queued and running plans (never an apply).
type Cancel struct{}

// Takeover hydrates the PR head into a sync's destination. An empty Sync means
// the repo's only sync; a zero Duration means the sync's default.
type Takeover struct {
	Sync     string
	Duration time.Duration
}

// Release ends a takeover. An empty Sync means the repo's only sync.
type Release struct{ Sync string }

// HelmTest upgrades the named releases (all when empty) and runs their Helm
// tests, only those named by Filters when Filters is not empty.
type HelmTest struct {
	Releases []string
	Filters  []string
}

// ApprovePolicies is an owner's approval of the policy denials of the
// named layers' plans (all blocked layers when empty).
type ApprovePolicies struct{ Layers []string }

// Help asks for usage and the layers, syncs and releases of the repo.
type Help struct{}

func (Plan) Name() string     { return "plan" }
func (Apply) Name() string    { return "apply" }
func (Unlock) Name() string   { return "unlock" }
func (Cancel) Name() string   { return "cancel" }
func (Takeover) Name() string { return "takeover" }
func (Release) Name() string  { return "release" }
func (HelmTest) Name() string { return "helm-test" }
func (Help) Name() string     { return "help" }

func (ApprovePolicies) Name() string { return "approve-policies" }

func (c ApprovePolicies) String() string { return render(c.Name(), c.Layers...) }

func (c Plan) String() string   { return render(c.Name(), c.Layers...) }
func (c Apply) String() string  { return render(c.Name(), c.Layers...) }
func (c Unlock) String() string { return render(c.Name(), c.Layers...) }
func (c Release) String() string {
	if c.Sync == "" {
		return render(c.Name())
	}
	return render(c.Name(), c.Sync)
}
func (c Help) String() string   { return render(c.Name()) }
func (c Cancel) String() string { return render(c.Name()) }

func (c Takeover) String() string {
	var args []string
	if c.Sync != "" {
		args = append(args, c.Sync)
	}
	if c.Duration != 0 {
		args = append(args, words.Duration(c.Duration))
	}
	return render(c.Name(), args...)
}

func (c HelmTest) String() string {
	args := append([]string(nil), c.Releases...)
	for _, f := range c.Filters {
		args = append(args, "--filter", f)
	}
	return render(c.Name(), args...)
}

func render(name string, args ...string) string {
	return strings.Join(append([]string{"/" + name}, args...), " ")
}

// UsageError is a Strata command with bad arguments. Its message is meant to be
// posted back to the PR as is.
type UsageError struct {
	Command string // command name, e.g. "takeover"
	Msg     string // what was wrong
}

func (e *UsageError) Error() string {
	return fmt.Sprintf("%s\n\nUsage: `%s`", e.Msg, usageLine[e.Command])
}

// Usage is the usage line of the command, e.g. "/release [SYNC]".
func (e *UsageError) Usage() string { return usageLine[e.Command] }

// Limits on what a comment may name.
const (
	MaxNameLen = 200
	MaxNames   = 50
)

var usageLine = map[string]string{
	"plan":      "/plan [LAYER...]",
	"apply":     "/apply [LAYER...]",
	"unlock":    "/unlock [LAYER...]",
	"cancel":    "/cancel",
	"takeover":  "/takeover [SYNC] [DURATION]",
	"release":   "/release [SYNC]",
	"helm-test": "/helm-test [RELEASE...] [--filter NAME]...",
	"help":      "/help",

	"approve-policies": "/approve-policies [LAYER...]",
}

var commandOrder = []string{"plan", "apply", "approve-policies", "unlock", "cancel", "takeover", "release", "helm-test", "help"}

var commandHelp = map[string]string{
	"plan":             "plan the named layers, or every layer the PR touches",
	"apply":            "apply the saved plans of the named layers, or all planned layers of the PR",
	"unlock":           "release this PR's locks (and discard its plans)",
	"cancel":           "cancel this PR's queued and running plans (Terraform is interrupted; an apply that started goes on; the locks stay)",
	"takeover":         "hydrate the PR head into SYNC's destination and pause push-hydration until released or expired (DURATION like `2h`, `1h30m` or `1d`)",
	"release":          "end a takeover and rehydrate from the default branch",
	"helm-test":        "upgrade/install the release from the PR's chart, then run its Helm tests (only the tests named by `--filter`, if any)",
	"approve-policies": "an owner of each policy set that denies a layer's plan approves that plan despite it (only the sets' owners count; a new commit or plan needs a new approval)",
	"help":             "this message, and the layers, syncs and releases of this repo",
}

// Usage is the markdown usage of all commands, for /help.
func Usage() string {
	var b strings.Builder
	b.WriteString("Comment one command as the first line of a comment:\n\n")
	b.WriteString("| command | what it does |\n| --- | --- |\n")
	for _, name := range commandOrder {
		fmt.Fprintf(&b, "| `%s` | %s |\n", usageLine[name], commandHelp[name])
	}
	b.WriteString("\nA layer may be named by its `name` or its `dir`.\n")
	return b.String()
}
