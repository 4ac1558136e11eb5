//go:build linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"strata.dev/strata/tooltest"
)

// runProbes runs the test binary through the launcher with spec, as
// Terraform is run, and returns what each probe gave.
func runProbes(t *testing.T, spec Spec, probes ...string) map[string]string {
	t.Helper()
	out, err := runLauncher(t, nil, spec, probes...)
	if err != nil {
		t.Fatalf("launcher: %v\n%s", err, out)
	}
	return parseProbes(out)
}

func parseProbes(out string) map[string]string {
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		p, r, _ := strings.Cut(line, " -> ")
		got[p] = r
	}
	return got
}

// aloneForTests, when set, is the launcher alone (cmd/strata-sandbox) that
// runLauncher starts in place of the program, as the server does when it
// lies next to its binary (TestTheLauncherAloneKeepsTheSamePromises).
var aloneForTests string

// runLauncher starts the program (the test binary when empty, whose init is
// the launcher too), or the launcher alone, with spec, as the server does;
// as user when set, the server's uid and gid then.
func runLauncher(t *testing.T, as *Credential, spec Spec, probes ...string) (string, error) {
	t.Helper()
	self, err := Launcher()
	if err != nil {
		t.Fatal(err)
	}
	if spec.Program == "" {
		spec.Program = self
	}
	if spec.Parent == 0 {
		spec.Parent = os.Getpid()
	}
	name, value := spec.Variable()
	cmd := exec.Command(spec.Program)
	if aloneForTests != "" {
		cmd = exec.Command(aloneForTests)
	}
	cmd.Env = append(os.Environ(), name+"="+value, probesEnv+"="+strings.Join(probes, "\n"))
	if as != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(as.UID), Gid: uint32(as.GID)}}
	}
	cmd.WaitDelay = 30 * time.Second // a daemon that keeps the output open does not hang the test
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func requireLandlock(t *testing.T) {
	t.Helper()
	if kernelABI() < 1 {
		tooltest.Missing(t, "Landlock", errors.New("this kernel has no Landlock"))
	}
}

// A confined program reads and writes where its Spec says, and gets EACCES
// everywhere else: a secret next door, its own and its parent's
// environment in /proc; it cannot empty a file it may not write either.
func TestConfinedProgramReachesOnlyItsPaths(t *testing.T) {
	requireLandlock(t)
	ro, rw, outside := t.TempDir(), t.TempDir(), t.TempDir()
	allowed := filepath.Join(ro, "allowed.txt")
	secret := filepath.Join(outside, "secret.pem")
	for _, f := range []string{allowed, secret} {
		if err := os.WriteFile(f, []byte("content"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("STRATA_SANDBOX_TEST_PARENT", "parent-only")
	parentEnviron := "/proc/" + strconv.Itoa(os.Getpid()) + "/environ"

	got := runProbes(t, Spec{ABI: kernelABI(), ReadWrite: []string{rw}, ReadOnly: []string{ro}, Env: map[string]string{"TF_VAR_given": "by-spec"}},
		"read:"+allowed,
		"write:"+filepath.Join(rw, "new.txt"),
		"write:"+filepath.Join(ro, "new.txt"),
		"read:"+secret,
		"truncate:"+secret,
		"write:"+filepath.Join(outside, "planted.txt"),
		"read:/proc/self/environ",
		"read:"+parentEnviron,
		"read:/etc/hosts",
		"env:"+specEnv,
		"env:"+confineEnv,
		"env:TF_VAR_given",
	)
	want := map[string]string{
		"read:" + allowed:                                "ok",
		"write:" + filepath.Join(rw, "new.txt"):          "ok",
		"write:" + filepath.Join(ro, "new.txt"):          "EACCES",
		"read:" + secret:                                 "EACCES",
		"truncate:" + secret:                             "EACCES",
		"write:" + filepath.Join(outside, "planted.txt"): "EACCES",
		"read:/proc/self/environ":                        "EACCES",
		"read:" + parentEnviron:                          "EACCES",
		"read:/etc/hosts":                                "ok",
		"env:" + specEnv:                                 "unset",
		"env:" + confineEnv:                              "unset",
		"env:TF_VAR_given":                               "set to by-spec",
	}
	for p, w := range want {
		if got[p] != w {
			t.Errorf("%s gave %q, want %q", p, got[p], w)
		}
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "content" {
		t.Errorf("secret after the probes = %q, %v", b, err)
	}
}

// Unconfined (`sandbox: off`), the launcher only execs: the same probe
// reads the file it was refused above.
func TestUnconfinedProgramIsOnlyExeced(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret.pem")
	if err := os.WriteFile(secret, []byte("content"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := runProbes(t, Spec{Unconfined: true}, "read:"+secret, "env:"+specEnv)
	if got["read:"+secret] != "ok" || got["env:"+specEnv] != "unset" {
		t.Errorf("unconfined probes = %v", got)
	}
}

// A Spec that cannot be applied runs nothing: the launcher says why and
// exits 126.
func TestLauncherFailsClosed(t *testing.T) {
	requireLandlock(t)
	out, err := runLauncher(t, nil, Spec{ABI: 1, ReadOnly: []string{"/nonexistent/strata-sandbox-path"}}, "read:/etc/hosts")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 126 {
		t.Fatalf("launcher with a missing path: %v, want exit 126\n%s", err, out)
	}
	if !strings.Contains(out, "strata sandbox: cannot confine") || strings.Contains(out, "->") {
		t.Errorf("output = %q, want the reason and no probe run", out)
	}
}

// A launcher whose server died before it could watch for it runs nothing.
func TestLauncherOfADeadServerRunsNothing(t *testing.T) {
	out, err := runLauncher(t, nil, Spec{Parent: 1}, "read:/etc/hosts")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 126 || !strings.Contains(out, "server that started this run is gone") {
		t.Fatalf("launcher with a dead parent: %v\n%s", err, out)
	}
}

// The launcher is strata-sandbox when it lies next to the binary as an
// executable file, the binary itself otherwise.
func TestLauncherNextTo(t *testing.T) {
	for _, tc := range []struct {
		name  string
		alone func(path string) error
		want  string
	}{
		{"alone, executable", func(p string) error { return os.WriteFile(p, nil, 0o755) }, LauncherName},
		{"alone, not executable", func(p string) error { return os.WriteFile(p, nil, 0o644) }, "strata"},
		{"a directory of its name", func(p string) error { return os.Mkdir(p, 0o755) }, "strata"},
		{"absent", func(string) error { return nil }, "strata"},
	} {
		dir := t.TempDir()
		if err := tc.alone(filepath.Join(dir, LauncherName)); err != nil {
			t.Fatal(err)
		}
		if got := launcherNextTo(filepath.Join(dir, "strata")); got != filepath.Join(dir, tc.want) {
			t.Errorf("%s: launcher %s, want %s", tc.name, got, filepath.Join(dir, tc.want))
		}
	}
}

// A launcher of another build than the server's (strata-sandbox left from
// an older release) gets a Spec it may not understand whole: it runs
// nothing and says why, rather than confine less than asked.
func TestLauncherRefusesASpecOfAnotherBuild(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, raw := range map[string]string{
		"another protocol": `{"program":"` + self + `","parent":` + strconv.Itoa(os.Getpid()) + `,"protocol":"0123456789abcdef"}`,
		"an unknown field": `{"program":"` + self + `","parent":` + strconv.Itoa(os.Getpid()) + `,"protocol":"` + specProtocol + `","landlock_v9":true}`,
		"no protocol":      `{"program":"` + self + `","parent":` + strconv.Itoa(os.Getpid()) + `}`,
	} {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), specEnv+"="+raw, probesEnv+"=read:/etc/hosts")
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 126 || strings.Contains(string(out), "->") {
			t.Errorf("%s: %v, want exit 126 and no probe run\n%s", name, err, out)
		}
		if !strings.Contains(string(out), "strata sandbox: ") {
			t.Errorf("%s: output %q does not say why", name, out)
		}
	}
}
