package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"strata.dev/strata/tooltest"
)

// probesEnv makes the test binary a probe: run as the confined program, it
// tries each probe ("read:PATH", "write:PATH", "truncate:PATH",
// "env:NAME") and prints one line per probe, "ok" or the error.
const probesEnv = "SANDBOX_TEST_PROBES"

func TestMain(m *testing.M) {
	if probes, ok := os.LookupEnv(probesEnv); ok {
		for _, p := range strings.Split(probes, "\n") {
			fmt.Printf("%s -> %s\n", p, probe(p))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func probe(p string) string {
	op, arg, _ := strings.Cut(p, ":")
	var err error
	switch op {
	case "read":
		_, err = os.ReadFile(arg)
	case "write":
		err = os.WriteFile(arg, []byte("written by the probe"), 0o600)
	case "truncate":
		err = os.Truncate(arg, 0)
	case "env":
		v, ok := os.LookupEnv(arg)
		if !ok {
			return "unset"
		}
		return "set to " + v
	}
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, syscall.EACCES):
		return "EACCES"
	}
	return err.Error()
}

// runProbes runs the test binary through the launcher with spec, as
// Terraform is run, and returns what each probe gave.
func runProbes(t *testing.T, spec Spec, probes ...string) map[string]string {
	t.Helper()
	out, err := runLauncher(t, spec, probes...)
	if err != nil {
		t.Fatalf("launcher: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		p, r, _ := strings.Cut(line, " -> ")
		got[p] = r
	}
	return got
}

func runLauncher(t *testing.T, spec Spec, probes ...string) (string, error) {
	t.Helper()
	self, err := Launcher()
	if err != nil {
		t.Fatal(err)
	}
	if spec.Program == "" {
		spec.Program = self
	}
	name, value := spec.Variable()
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), name+"="+value, probesEnv+"="+strings.Join(probes, "\n"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func requireLandlock(t *testing.T) {
	t.Helper()
	if err := Detect(false).Err(); err != nil {
		tooltest.Missing(t, "Landlock", err)
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

	got := runProbes(t, Spec{ReadWrite: []string{rw}, ReadOnly: []string{ro}, Env: map[string]string{"TF_VAR_given": "by-spec"}},
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
	out, err := runLauncher(t, Spec{ReadOnly: []string{"/nonexistent/strata-sandbox-path"}}, "read:/etc/hosts")
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 126 {
		t.Fatalf("launcher with a missing path: %v, want exit 126\n%s", err, out)
	}
	if !strings.Contains(out, "strata sandbox: cannot confine") || strings.Contains(out, "->") {
		t.Errorf("output = %q, want the reason and no probe run", out)
	}
}

func TestStatusSaysWhichAndWhatToDo(t *testing.T) {
	for _, tc := range []struct {
		s    Status
		want string
		ok   bool
	}{
		{Status{ABI: 7}, "landlock ABI 7", true},
		{Status{ABI: 7, Off: true}, "off (server config)", true},
		{Status{ABI: 0, Off: true}, "off (server config)", true},
		{Status{ABI: 0}, "unavailable (this kernel has no Landlock)", false},
		{Status{ABI: 2}, "unavailable (Landlock ABI 2, Strata needs 3)", false},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%+v says %q, want %q", tc.s, got, tc.want)
		}
		err := tc.s.Err()
		if (err == nil) != tc.ok {
			t.Errorf("%+v: err = %v, want ok = %v", tc.s, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "sandbox: off")) {
			t.Errorf("%+v: err %q does not say how to go on", tc.s, err)
		}
	}
}
