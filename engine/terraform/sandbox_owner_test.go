package terraform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/sandbox"
)

// Whether the sandbox's user may read an operator's read_only path, by
// owner, group and mode.
func TestReadableBy(t *testing.T) {
	u := &sandbox.Credential{UID: 65534, GID: 65534}
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		mode     os.FileMode
		uid, gid int
		want     bool
	}{
		{"root's 0600", 0o600, 0, 0, false},
		{"root's 0644", 0o644, 0, 0, true},
		{"root's, group nogroup, 0640", 0o640, 0, 65534, true},
		{"root's, group nogroup, 0600", 0o600, 0, 65534, false},
		{"nobody's 0600", 0o600, 65534, 0, true},
		{"nobody's 0060: the owner's bits count", 0o060, 65534, 65534, false},
	} {
		f := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		if err := os.WriteFile(f, nil, tc.mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(f, tc.uid, tc.gid); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, tc.mode); err != nil {
			t.Fatal(err)
		}
		if got := readableBy(f, u); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// As root, a plan hands the run's files to nobody, without widening what
// holds secrets: the operator's CLI config stays 0600 (Terraform reads a
// copy), and a read_only credentials file nobody cannot read stops the
// run, naming it.
func TestSandboxUserGetsOnlyWhatItNeeds(t *testing.T) {
	s := newScenario(t)
	if os.Geteuid() != 0 {
		t.Skip("the separate user applies to a server running as root")
	}
	rc := filepath.Join(t.TempDir(), "terraform.rc")
	if err := os.WriteFile(rc, []byte("# credentials \"example.com\" { token = \"secret\" }\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	setup := s.tree(map[string]string{"main.tf": "output \"x\" {\n  value = 1\n}\n"})
	setup.CLIConfigFile = rc
	if _, err := Plan(testContext(t), PlanInput{Setup: setup}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(rc); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the CLI config after the plan: %v, %v; want it 0600 still", fi.Mode(), err)
	}

	secret := filepath.Join(t.TempDir(), "credentials")
	if err := os.WriteFile(secret, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	setup = s.tree(map[string]string{"main.tf": "output \"x\" {\n  value = 1\n}\n"})
	setup.Sandbox = &Sandbox{ReadWrite: s.sandbox.ReadWrite, ReadOnly: []string{secret}}
	_, err := Plan(testContext(t), PlanInput{Setup: setup})
	if err == nil || !strings.Contains(err.Error(), "terraform.sandbox_paths.read_only "+secret+" is not readable by uid 65534") {
		t.Errorf("a read_only path nobody cannot read: %v", err)
	}
}
