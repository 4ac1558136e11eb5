package checks

import "testing"

func TestButtonCommand(t *testing.T) {
	for _, tc := range []struct{ name, button, want string }{
		{"strata/plan: network", "apply", "/apply network"},
		{"strata/plan: network", "plan", "/plan network"},
		{"strata/plan: network", "unlock", "/unlock network"},
		{"strata/apply: network", "plan", "/plan network"},
		{"strata/apply: network", "apply", ""},
		{"strata/lock: network", "unlock", "/unlock network"},
		{"strata/takeover: dev", "release", "/release dev"},
		{"strata/helm-test: api", "helm-test", "/helm-test api"},
		{"strata/hydrate: dev", "release", ""},
		{"ci/build", "apply", ""},
	} {
		if got := ButtonCommand(tc.name, tc.button); got != tc.want {
			t.Errorf("ButtonCommand(%q, %q) = %q, want %q", tc.name, tc.button, got, tc.want)
		}
	}
}

func TestRerunCommand(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"strata/plan: network", "/plan network"},
		{"strata/helm-test: api", "/helm-test api"},
		{"strata/apply: network", ""},
		{"strata/lock: network", ""},
		{"strata/takeover: dev", ""},
	} {
		if got := RerunCommand(tc.name); got != tc.want {
			t.Errorf("RerunCommand(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestExternalID(t *testing.T) {
	if got := PROf(ExternalID(42)); got != 42 {
		t.Errorf("PROf(ExternalID(42)) = %d", got)
	}
	for _, id := range []string{"", "pr:", "pr:x", "42", "pr:-1", "issue:4"} {
		if got := PROf(id); got != 0 {
			t.Errorf("PROf(%q) = %d, want 0", id, got)
		}
	}
}
