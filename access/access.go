// Package access decides who may run what: every command and every button
// of Strata, in one table. The command job asks it before any command runs
// (a button press arrives as the command it stands for), and the events
// that run code on their own (autoplan, previews) ask it too; nothing else
// grants or refuses by permission.
package access

import (
	"fmt"

	"strata.dev/strata/pull"
)

// Policy is the server's say in the table: the least repository permission
// for each class of command.
type Policy struct {
	// Plan is the least permission for commands that run a PR's code
	// without side effects, stop them, or release a PR's locks: /plan,
	// /cancel, /unlock (server config plan_permission; write when empty).
	Plan pull.Permission
	// Apply is the least permission for commands with side effects:
	// /apply, /takeover, /release, /helm-test (server config
	// apply_permission; write when empty).
	Apply pull.Permission
}

// Subject is who asks, as GitHub knows them on the repository. Whether the
// PR is a fork, or theirs, changes nothing: the author of a fork's PR gets
// no more than their permission (usually read), so the table needs no fact
// of the PR and is asked before the PR is read.
type Subject struct {
	User       string
	Permission pull.Permission
}

// Decision is the table's answer: allowed, or refused with the reason the
// user reads.
type Decision struct {
	Allowed bool
	// Need is the least permission the command needs.
	Need   pull.Permission
	Reason string
	// Quiet: refused without a reply. GitHub gives no permission to a user
	// who cannot read the repository; answering them would only let anyone
	// make the bot write (and spend its rate limit).
	Quiet bool
}

// Actions on a layer's managed Terraform state (docs/state.md): web UI
// buttons, the force unlock of /unlock, and `strata state pull|push`.
const (
	StateDownload = "state-download"
	StateRollback = "state-rollback"
	StateUnlock   = "state-unlock"
	StatePull     = "state-pull"
	StatePush     = "state-push"
)

// Need is the least permission the command needs under policy. Every
// command needs one, so the caller always looks the user's up, first.
func Need(command string, p Policy) pull.Permission {
	switch command {
	case "plan", "cancel", "unlock":
		return orWrite(p.Plan)
	case "help":
		return pull.Read // runs nothing, but lists the repository's layers
	case "approve-policies":
		// The sets' owners are the real gate (checked by the command): an
		// owner may be a reader of the repository, as a security team
		// often is. A user without any permission is still refused quietly.
		return pull.Read
	case StateDownload, StateRollback, StateUnlock, StatePull, StatePush:
		// A state holds every secret of its layer in the clear, and
		// rewriting it makes Terraform forget or recreate real resources:
		// the repository's admins only, whatever the server's policy.
		return pull.Admin
	}
	// /apply, /takeover, /release, /helm-test, and any command this table
	// does not know yet: the most a command may need.
	return orWrite(p.Apply)
}

func orWrite(p pull.Permission) pull.Permission {
	if p == "" {
		return pull.Write
	}
	return p
}

// Decide says whether s may run command (a button stands for the command
// it runs) under policy p, from the command and the user's permission
// alone: the command job asks before it reacts, reads the PR or loads its
// config. The PR's author gets no more than their permission: on a fork
// that is usually read, so a fork's own author can run nothing, and its
// code runs only when someone with the permission asks, having read it.
func Decide(command string, s Subject, p Policy) Decision {
	need := Need(command, p)
	if s.Permission.AtLeast(need) {
		return Decision{Allowed: true, Need: need}
	}
	perm := s.Permission
	if !perm.Valid() || perm == pull.None {
		perm = "no"
	}
	return Decision{Need: need, Quiet: perm == "no", Reason: fmt.Sprintf("@%s has %s permission on this repository; %s needs %s or higher.",
		s.User, perm, doing(command), need)}
}

// RunsOnItsOwn says whether Strata may run a PR's code without anyone
// asking (autoplan on a push, the preview of a sync): never for a fork,
// whose code nobody with write permission has read yet.
func RunsOnItsOwn(fork bool) bool { return !fork }

// doing names what a command does, in a refusal's words.
func doing(command string) string {
	switch command {
	case "apply":
		return "applying"
	case "takeover":
		return "a takeover"
	case "release":
		return "releasing a takeover"
	case StateDownload:
		return "downloading a state"
	case StateRollback:
		return "rolling a state back"
	case StateUnlock:
		return "clearing a state lock"
	case StatePull:
		return "`strata state pull`"
	case StatePush:
		return "`strata state push`"
	}
	return "`/" + command + "`"
}
