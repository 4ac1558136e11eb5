package access

import (
	"strings"
	"testing"

	"strata.dev/strata/checks"
	"strata.dev/strata/pull"
)

// Who may run each command, under the default policy and stricter ones: the
// permissions allowed, lowest first, as literals. A button arrives as the
// command it stands for (TestButtonsStandForCommands).
func TestDecide(t *testing.T) {
	def, loose, strict := Policy{}, Policy{Plan: pull.Read, Apply: pull.Maintain}, Policy{Plan: pull.Maintain, Apply: pull.Admin}
	for _, tc := range []struct {
		command string
		policy  Policy
		allowed string
	}{
		{"plan", def, "write maintain admin"},
		{"cancel", def, "write maintain admin"},
		{"unlock", def, "write maintain admin"},
		{"apply", def, "write maintain admin"},
		{"takeover", def, "write maintain admin"},
		{"release", def, "write maintain admin"},
		{"helm-test", def, "write maintain admin"},
		{"help", def, "read triage write maintain admin"},
		{"plan", loose, "read triage write maintain admin"},
		{"cancel", loose, "read triage write maintain admin"},
		{"unlock", loose, "read triage write maintain admin"},
		{"apply", loose, "maintain admin"},
		{"takeover", loose, "maintain admin"},
		{"release", loose, "maintain admin"},
		{"helm-test", loose, "maintain admin"},
		{"help", loose, "read triage write maintain admin"},
		{"plan", strict, "maintain admin"},
		{"cancel", strict, "maintain admin"},
		{"unlock", strict, "maintain admin"},
		{"apply", strict, "admin"},
		{"takeover", strict, "admin"},
		{"release", strict, "admin"},
		{"helm-test", strict, "admin"},
		{"help", strict, "read triage write maintain admin"},
		// The sets' owners are the gate (layers/policy_approve.go); a
		// stranger is still refused, quietly.
		{"approve-policies", def, "read triage write maintain admin"},
		{"approve-policies", strict, "read triage write maintain admin"},
		{"state-download", def, "admin"},
		{"state-rollback", def, "admin"},
		{"state-unlock", def, "admin"},
		{"state-pull", def, "admin"},
		{"state-push", def, "admin"},
		{"state-download", loose, "admin"},
		{"state-push", loose, "admin"},
		{"state-rollback", strict, "admin"},
		{"state-pull", Policy{Plan: pull.Read, Apply: pull.Read}, "admin"},
	} {
		var got []string
		for _, perm := range []pull.Permission{pull.None, pull.Read, pull.Triage, pull.Write, pull.Maintain, pull.Admin, "", "custom-role"} {
			d := Decide(tc.command, Subject{User: "u", Permission: perm}, tc.policy)
			if d.Allowed {
				got = append(got, string(perm))
			}
			if !d.Allowed && d.Reason == "" {
				t.Errorf("%s by %q under %+v: refused without a reason", tc.command, perm, tc.policy)
			}
		}
		if strings.Join(got, " ") != tc.allowed {
			t.Errorf("%s under %+v: allowed for %q, want %q", tc.command, tc.policy, strings.Join(got, " "), tc.allowed)
		}
	}
}

// The refusal says who, what they have, and what is needed; only a user
// without any permission is refused without a reply.
func TestDecideRefusals(t *testing.T) {
	for _, tc := range []struct {
		command string
		s       Subject
		policy  Policy
		want    Decision
	}{
		{"plan", Subject{"stranger", pull.None}, Policy{}, Decision{Need: pull.Write, Quiet: true,
			Reason: "@stranger has no permission on this repository; `/plan` needs write or higher."}},
		{"help", Subject{"stranger", pull.None}, Policy{}, Decision{Need: pull.Read, Quiet: true,
			Reason: "@stranger has no permission on this repository; `/help` needs read or higher."}},
		{"plan", Subject{"ghost", ""}, Policy{}, Decision{Need: pull.Write, Quiet: true,
			Reason: "@ghost has no permission on this repository; `/plan` needs write or higher."}},
		{"plan", Subject{"odd", "custom-role"}, Policy{}, Decision{Need: pull.Write, Quiet: true,
			Reason: "@odd has no permission on this repository; `/plan` needs write or higher."}},
		{"plan", Subject{"mallory", pull.Read}, Policy{}, Decision{Need: pull.Write,
			Reason: "@mallory has read permission on this repository; `/plan` needs write or higher."}},
		{"apply", Subject{"reader", pull.Read}, Policy{}, Decision{Need: pull.Write,
			Reason: "@reader has read permission on this repository; applying needs write or higher."}},
		{"helm-test", Subject{"writer", pull.Write}, Policy{Apply: pull.Maintain}, Decision{Need: pull.Maintain,
			Reason: "@writer has write permission on this repository; `/helm-test` needs maintain or higher."}},
		{"takeover", Subject{"triager", pull.Triage}, Policy{}, Decision{Need: pull.Write,
			Reason: "@triager has triage permission on this repository; a takeover needs write or higher."}},
		{"release", Subject{"triager", pull.Triage}, Policy{}, Decision{Need: pull.Write,
			Reason: "@triager has triage permission on this repository; releasing a takeover needs write or higher."}},
		{"cancel", Subject{"reader", pull.Read}, Policy{}, Decision{Need: pull.Write,
			Reason: "@reader has read permission on this repository; `/cancel` needs write or higher."}},
		{"unlock", Subject{"triager", pull.Triage}, Policy{}, Decision{Need: pull.Write,
			Reason: "@triager has triage permission on this repository; `/unlock` needs write or higher."}},
		{"plan", Subject{"maintainer", pull.Maintain}, Policy{}, Decision{Allowed: true, Need: pull.Write}},
		{"state-download", Subject{"writer", pull.Write}, Policy{}, Decision{Need: pull.Admin,
			Reason: "@writer has write permission on this repository; downloading a state needs admin or higher."}},
		{"state-rollback", Subject{"maintainer", pull.Maintain}, Policy{}, Decision{Need: pull.Admin,
			Reason: "@maintainer has maintain permission on this repository; rolling a state back needs admin or higher."}},
		{"state-unlock", Subject{"writer", pull.Write}, Policy{}, Decision{Need: pull.Admin,
			Reason: "@writer has write permission on this repository; clearing a state lock needs admin or higher."}},
		{"state-push", Subject{"writer", pull.Write}, Policy{}, Decision{Need: pull.Admin,
			Reason: "@writer has write permission on this repository; `strata state push` needs admin or higher."}},
		{"state-pull", Subject{"stranger", pull.None}, Policy{}, Decision{Need: pull.Admin, Quiet: true,
			Reason: "@stranger has no permission on this repository; `strata state pull` needs admin or higher."}},
		{"state-pull", Subject{"owner", pull.Admin}, Policy{}, Decision{Allowed: true, Need: pull.Admin}},
		{"plan", Subject{"reader", pull.Read}, Policy{Plan: pull.Read}, Decision{Allowed: true, Need: pull.Read}},
	} {
		if got := Decide(tc.command, tc.s, tc.policy); got != tc.want {
			t.Errorf("%s by %+v under %+v:\n got %+v\nwant %+v", tc.command, tc.s, tc.policy, got, tc.want)
		}
	}
}

// Every button, and GitHub's Re-run of a check, stands for a command of the
// table: pressing it is asked as that command.
func TestButtonsStandForCommands(t *testing.T) {
	for _, tc := range []struct{ check, button, want string }{
		{checks.Plan("network"), checks.ButtonApply, "apply"},
		{checks.Plan("network"), checks.ButtonPlan, "plan"},
		{checks.Plan("network"), checks.ButtonUnlock, "unlock"},
		{checks.Apply("network"), checks.ButtonPlan, "plan"},
		{checks.Lock("network"), checks.ButtonUnlock, "unlock"},
		{checks.Takeover("dev"), checks.ButtonRelease, "release"},
		{checks.HelmTest("api"), checks.ButtonHelmTest, "helm-test"},
	} {
		line := checks.ButtonCommand(tc.check, tc.button)
		if f := strings.Fields(line); len(f) == 0 || f[0] != "/"+tc.want {
			t.Errorf("button %s on %s stands for %q, want /%s", tc.button, tc.check, line, tc.want)
		}
	}
	for check, want := range map[string]string{checks.Plan("network"): "plan", checks.HelmTest("api"): "helm-test"} {
		if f := strings.Fields(checks.RerunCommand(check)); len(f) == 0 || f[0] != "/"+want {
			t.Errorf("Re-run of %s stands for %q, want /%s", check, checks.RerunCommand(check), want)
		}
	}
}

// The attack: a fork's author, who can only read, asks for a plan of their
// own PR (running their code with the server's credentials).
func TestForkAuthorWithReadCannotPlan(t *testing.T) {
	d := Decide("plan", Subject{User: "mallory", Permission: pull.Read}, Policy{})
	if d.Allowed {
		t.Fatal("a fork author with read permission may plan")
	}
	if want := "@mallory has read permission on this repository; `/plan` needs write or higher."; d.Reason != want {
		t.Errorf("reason = %q, want %q", d.Reason, want)
	}
	if !Decide("plan", Subject{User: "maintainer", Permission: pull.Maintain}, Policy{}).Allowed {
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
