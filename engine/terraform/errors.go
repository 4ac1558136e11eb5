package terraform

import (
	"regexp"
	"strings"
)

// Error is a Terraform command that failed: a syntax error, an init that could
// not install a module or satisfy `required_version`, an invalid reference, a
// stale saved plan. Message is what Terraform wrote to stderr, without colour
// codes, so that it can be shown on the PR as Terraform said it.
type Error struct {
	Command string // the subcommand: "init", "plan", "apply", ...
	Message string
	Err     error // what terraform-exec returned (an *exec.ExitError, or the context's error)
	Kind    Kind  // the engine that ran it; empty is terraform
}

func (e *Error) Error() string {
	if e.Message == "" {
		return e.Name() + ": " + e.Err.Error()
	}
	return e.Name() + ": " + e.Message
}

// Name is the command as typed, `terraform plan` or `tofu plan`.
func (e *Error) Name() string { return e.Kind.command() + " " + e.Command }

func (e *Error) Unwrap() error { return e.Err }

var ansiEscape = regexp.MustCompile(`\x1b\[[0-9;]*[A-Za-z]`)

// cleanMessage strips colour codes and the blank lines Terraform surrounds
// its diagnostics with.
func cleanMessage(stderr string) string {
	return strings.TrimSpace(ansiEscape.ReplaceAllString(stderr, ""))
}
