package access

import (
	"testing"

	"strata.dev/strata/pull"
)

// Every command × every permission × fork or not × author or not.
func TestDecide(t *testing.T) {
	sideEffects := map[string]bool{"apply": true, "takeover": true, "release": true, "helm-test": true}
	commands := []string{"plan", "apply", "unlock", "takeover", "release", "helm-test", "help"}
	for _, policy := range []Policy{{}, {Apply: pull.Maintain}, {Apply: pull.Admin}} {
		least := policy.Apply
		if least == "" {
			least = pull.Write
		}
		for _, cmd := range commands {
			for _, perm := range pull.Permissions {
				for _, fork := range []bool{false, true} {
					for _, author := range []bool{false, true} {
						s := Subject{User: "u", Permission: perm, Fork: fork, Author: author}
						got := Decide(cmd, s, policy)
						want := !sideEffects[cmd] || perm.AtLeast(least)
						if got.Allowed != want {
							t.Errorf("%s by %s (fork %v, author %v, apply %s): allowed = %v, want %v",
								cmd, perm, fork, author, least, got.Allowed, want)
						}
						if !got.Allowed && got.Reason == "" {
							t.Errorf("%s by %s: refused without a reason", cmd, perm)
						}
					}
				}
			}
		}
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
}
