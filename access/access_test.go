package access

import (
	"strings"
	"testing"

	"strata.dev/strata/checks"
	"strata.dev/strata/pull"
)

// What each command or button asks for, as the table says it: run, below
// which class of permission.
var sideEffects = map[string]bool{"apply": true, "takeover": true, "release": true, "helm-test": true}
var runsCode = map[string]bool{"plan": true, "cancel": true, "unlock": true}

// Every command and every button (a button arrives as the command it stands
// for, through checks.ButtonCommand) × every permission × fork or not ×
// author or not, under the default policy and stricter ones.
func TestDecide(t *testing.T) {
	var asked []string // "command" or "button on check"
	for _, c := range []string{"plan", "apply", "unlock", "cancel", "takeover", "release", "helm-test", "help"} {
		asked = append(asked, c)
	}
	buttons := []struct{ check, button string }{
		{checks.Plan("network"), checks.ButtonApply}, {checks.Plan("network"), checks.ButtonPlan},
		{checks.Plan("network"), checks.ButtonUnlock}, {checks.Apply("network"), checks.ButtonPlan},
		{checks.Lock("network"), checks.ButtonUnlock}, {checks.Takeover("dev"), checks.ButtonRelease},
		{checks.HelmTest("api"), checks.ButtonHelmTest},
	}
	commandOf := func(line string) string { return strings.TrimPrefix(strings.Fields(line)[0], "/") }
	for _, b := range buttons {
		line := checks.ButtonCommand(b.check, b.button)
		if line == "" {
			t.Fatalf("button %s on %s stands for no command", b.button, b.check)
		}
		asked = append(asked, commandOf(line))
	}
	for _, check := range []string{checks.Plan("network"), checks.HelmTest("api")} { // GitHub's Re-run
		asked = append(asked, commandOf(checks.RerunCommand(check)))
	}

	for _, policy := range []Policy{{}, {Plan: pull.Read, Apply: pull.Maintain}, {Plan: pull.Maintain, Apply: pull.Admin}} {
		for _, cmd := range asked {
			for _, perm := range pull.Permissions {
				for _, fork := range []bool{false, true} {
					for _, author := range []bool{false, true} {
						s := Subject{User: "u", Permission: perm, Fork: fork, Author: author}
						got := Decide(cmd, s, policy)
						want := true
						switch {
						case sideEffects[cmd]:
							want = perm.AtLeast(orWrite(policy.Apply))
						case runsCode[cmd]:
							want = perm.AtLeast(orWrite(policy.Plan))
						}
						if got.Allowed != want {
							t.Errorf("%s by %s (fork %v, author %v, policy %+v): allowed = %v, want %v",
								cmd, perm, fork, author, policy, got.Allowed, want)
						}
						if !got.Allowed && !strings.Contains(got.Reason, string(got.Need)+" or higher") {
							t.Errorf("%s by %s: refusal %q does not say which permission is needed", cmd, perm, got.Reason)
						}
					}
				}
			}
		}
	}
}

// The attack: a fork's author, who can only read, asks for a plan of their
// own PR (running their code with the server's credentials).
func TestForkAuthorWithReadCannotPlan(t *testing.T) {
	d := Decide("plan", Subject{User: "mallory", Permission: pull.Read, Fork: true, Author: true}, Policy{})
	if d.Allowed {
		t.Fatal("a fork author with read permission may plan")
	}
	if want := "@mallory has read permission on this repository; `/plan` needs write or higher."; d.Reason != want {
		t.Errorf("reason = %q, want %q", d.Reason, want)
	}
	if !Decide("plan", Subject{User: "maintainer", Permission: pull.Maintain, Fork: true}, Policy{}).Allowed {
		t.Error("a maintainer may not plan a fork's PR")
	}
}

func TestDecideReasonNamesThePermissions(t *testing.T) {
	d := Decide("apply", Subject{User: "reader", Permission: pull.Read}, Policy{})
	if want := "@reader has read permission on this repository; applying needs write or higher."; d.Reason != want {
		t.Errorf("reason = %q, want %q", d.Reason, want)
	}
	d = Decide("helm-test", Subject{User: "stranger", Permission: pull.None}, Policy{Apply: pull.Maintain})
	if want := "@stranger has no permission on this repository; `/helm-test` needs maintain or higher."; d.Reason != want {
		t.Errorf("reason = %q, want %q", d.Reason, want)
	}
	d = Decide("cancel", Subject{User: "reader", Permission: pull.Read}, Policy{})
	if want := "@reader has read permission on this repository; `/cancel` needs write or higher."; d.Reason != want {
		t.Errorf("reason = %q, want %q", d.Reason, want)
	}
	d = Decide("unlock", Subject{User: "triager", Permission: pull.Triage}, Policy{})
	if want := "@triager has triage permission on this repository; `/unlock` needs write or higher."; d.Reason != want {
		t.Errorf("reason = %q, want %q", d.Reason, want)
	}
}

func TestNothingRunsOnItsOwnForForks(t *testing.T) {
	if RunsOnItsOwn(true) || !RunsOnItsOwn(false) {
		t.Error("autoplan and previews must run for same-repository PRs only")
	}
}
