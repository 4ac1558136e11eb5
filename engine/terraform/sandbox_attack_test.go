//go:build linux

package terraform

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"strata.dev/strata/sandbox"
)

// attacker builds sandbox/sandboxtest/attacker, a PR's program that tries
// each attack its arguments name.
func attacker(t *testing.T) []byte {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	bin := filepath.Join(t.TempDir(), "attacker")
	cmd := exec.Command("go", "build", "-o", bin, "./sandbox/sandboxtest/attacker")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The attacks of the security issue's first item from a PR's local-exec
// provisioner, applied by Terraform in the server's sandbox: every one is
// refused (Strata runs as root here: Terraform as nobody, in a PID
// namespace). The control: the same provisioner unconfined (`sandbox:
// off`, how every provisioner ran before) sniffs, makes a block device,
// binds port 80, chowns, sets the loopback's flags.
func TestAProvisionerKeepsNoPrivilege(t *testing.T) {
	s := newScenario(t)
	bin := attacker(t)
	secret := filepath.Join(t.TempDir(), "app-key.pem")
	if err := os.WriteFile(secret, []byte("key"), 0o600); err != nil {
		t.Fatal(err)
	}
	server := strconv.Itoa(os.Getpid())
	attacks := []string{"packet-socket", "raw-socket", "mknod:disk", "mount:.", "unshare", "userns", "bpf", "bind:80",
		"chown:main.tf", "link-flags", "signal:" + server, "ptrace:" + server, "read:/proc/1/environ", "read:" + secret, "creds"}
	layerOf := func(attacks []string) map[string]string {
		return map[string]string{"main.tf": "resource \"terraform_data\" \"attack\" {\n  provisioner \"local-exec\" {\n    command = " +
			strconv.Quote("../attacker "+strings.Join(attacks, " ")) + "\n  }\n}\n"}
	}
	run := func(s *scenario, layer map[string]string, setup Setup) map[string]string {
		t.Helper()
		if err := os.WriteFile(filepath.Join(setup.Root, "attacker"), bin, 0o755); err != nil {
			t.Fatal(err)
		}
		r, err := Plan(testContext(t), PlanInput{Setup: setup})
		if err != nil {
			t.Fatal(err)
		}
		apply := s.tree(layer)
		apply.Sandbox = setup.Sandbox
		if err := os.WriteFile(filepath.Join(apply.Root, "attacker"), bin, 0o755); err != nil {
			t.Fatal(err)
		}
		a, err := Apply(testContext(t), ApplyInput{Setup: apply, PlanFile: r.PlanFile})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, line := range strings.Split(a.Text, "\n") {
			line = strings.TrimPrefix(line, "terraform_data.attack (local-exec): ")
			if k, v, ok := strings.Cut(line, " -> "); ok {
				got[k] = v
			}
		}
		return got
	}
	layer := layerOf(attacks)
	got := run(s, layer, s.tree(layer))
	want := map[string]string{
		"packet-socket": "EPERM", "raw-socket": "EPERM", "mknod:disk": "EPERM", "mount:.": "EPERM", "unshare": "EPERM",
		"userns": "EPERM", "bpf": "EPERM", "bind:80": "EACCES", "chown:main.tf": "EPERM", "link-flags": "EPERM",
		"signal:" + server: "no such process", "ptrace:" + server: "EPERM", "read:/proc/1/environ": "EACCES", "read:" + secret: "EACCES",
		"creds": "eff=0 prm=0 inh=0 bounding=0 ambient=0 no_new_privs=1 seccomp=2 uid=65534,65534,65534",
	}
	for _, a := range attacks {
		if got[a] != want[a] {
			t.Errorf("%s gave %q, want %q", a, got[a], want[a])
		}
	}

	// (Not ptrace nor signal of the test itself, which would work.)
	control := newScenario(t) // a state of its own
	unconfined := []string{"packet-socket", "raw-socket", "mknod:disk", "bind:80", "chown:main.tf", "link-flags", "read:" + secret}
	layer = layerOf(unconfined)
	off := control.tree(layer)
	off.Sandbox = &Sandbox{Settings: sandbox.Settings{Mode: sandbox.Off}, ReadWrite: control.sandbox.ReadWrite}
	got = run(control, layer, off)
	for _, a := range unconfined {
		if got[a] != "ok" {
			t.Errorf("unconfined, %s gave %q: the attack does not work even without the sandbox", a, got[a])
		}
	}
}
