//go:build linux

package sandbox

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// strataUID is the uid the tests run "Strata" as when it is not root.
const strataUID = 4242

// world is what an attack test needs: the probe binary where every user
// can run it, a directory of the run, a secret of the server's, and a
// process of the server's uid to signal.
type world struct {
	bin, run, secret string
	server           *exec.Cmd
}

// newWorld lays it out for a server of uid (0: root) whose Terraform runs
// as runAs.
func newWorld(t *testing.T, uid, runAs int) world {
	t.Helper()
	base, err := os.MkdirTemp("", "sandbox-attack-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	w := world{bin: filepath.Join(base, "probe"), run: filepath.Join(base, "run"), secret: filepath.Join(base, "data", "secret.pem")}
	must(t, os.Chmod(base, 0o755))
	self, err := os.Executable()
	must(t, err)
	copyFile(t, self, w.bin, 0o755)
	must(t, os.Mkdir(w.run, 0o700))
	must(t, os.Chown(w.run, runAs, runAs))
	must(t, os.Mkdir(filepath.Dir(w.secret), 0o700))
	must(t, os.WriteFile(w.secret, []byte("the App's key"), 0o600))
	for _, p := range []string{filepath.Dir(w.secret), w.secret} {
		must(t, os.Chown(p, uid, uid))
	}
	must(t, os.WriteFile(filepath.Join(w.run, "mine"), nil, 0o600))
	must(t, os.Chown(filepath.Join(w.run, "mine"), runAs, runAs))
	// A process of the server's, to signal and trace.
	w.server = exec.Command(w.bin)
	w.server.Env = append(os.Environ(), daemonEnv+"=server")
	w.server.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	out, err := w.server.StdoutPipe()
	must(t, err)
	must(t, w.server.Start())
	t.Cleanup(func() { w.server.Process.Kill(); w.server.Wait() })
	line := make([]byte, 32)
	if _, err := out.Read(line); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return w
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	must(t, err)
	must(t, os.WriteFile(to, b, mode))
}

// user is a server the attacks run against: root, whose Terraform runs as
// nobody, or an unprivileged uid, whose Terraform runs as itself.
type user struct {
	name string
	uid  int
}

var users = []user{{"root", 0}, {"non-root", strataUID}}

// reportFor is what Detect says for a server of u on this kernel, the ABI
// capped at maxABI.
func reportFor(u user, maxABI int) Report {
	root := u.uid == 0
	return Protect(Facts{Linux: true, KernelABI: kernelABI(), Root: root, SysAdmin: root, Seccomp: true, UID: u.uid},
		Settings{Mode: BestEffort, Test: Cap{MaxABI: maxABI}})
}

// attack runs the probes as a pull request's program of a server of u.
func (w world) attack(t *testing.T, u user, rep Report, probes ...string) map[string]string {
	t.Helper()
	spec := rep.Spec(w.bin, 0)
	spec.ReadWrite = []string{w.run}
	var as *Credential
	if u.uid != 0 {
		as = &Credential{UID: u.uid, GID: u.uid}
	}
	out, err := runLauncher(t, as, spec, probes...)
	if err != nil {
		t.Fatalf("launcher: %v\n%s", err, out)
	}
	return parseProbes(out)
}

// The attacks of the security issue's first item, each from a pull
// request's program, as root and as non-root: every one is refused. The
// same probes unconfined (`sandbox: off`, what every program got before)
// succeed as root: the positive control that they attack for real.
func TestAPullRequestsProgramKeepsNoPrivilege(t *testing.T) {
	requireLandlock(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			rep := reportFor(u, 0)
			runAs := u.uid
			if rep.User != nil {
				runAs = rep.User.UID
			}
			w := newWorld(t, u.uid, runAs)
			server := strconv.Itoa(w.server.Process.Pid)
			probes := []string{
				"packet-socket", "raw-socket", "mknod:" + filepath.Join(w.run, "disk"), "mount:" + w.run,
				"unshare", "userns", "ptrace:" + server, "bpf", "bind:80", "chown:" + filepath.Join(w.run, "mine"),
				"link-flags", "signal:" + server, "read:/proc/1/environ", "read:/proc/" + server + "/environ",
				"read:" + w.secret, "truncate:" + w.secret,
				"creds",
			}
			got := w.attack(t, u, rep, probes...)
			uid := strconv.Itoa(runAs)
			want := map[string]string{
				"packet-socket": "EPERM", "raw-socket": "EPERM", "mknod:" + filepath.Join(w.run, "disk"): "EPERM",
				"mount:" + w.run: "EPERM", "unshare": "EPERM", "userns": "EPERM",
				"ptrace:" + server: "EPERM", "bpf": "EPERM", "bind:80": "EACCES",
				"chown:" + filepath.Join(w.run, "mine"): "EPERM", "link-flags": "EPERM", "signal:" + server: "EPERM",
				"read:/proc/1/environ": "EACCES", "read:/proc/" + server + "/environ": "EACCES",
				"read:" + w.secret: "EACCES", "truncate:" + w.secret: "EACCES",
				"creds": "eff=0 prm=0 inh=0 bounding=0 ambient=0 no_new_privs=1 seccomp=2 uid=" + uid + "," + uid + "," + uid,
			}
			if u.uid == 0 {
				// Terraform runs in a PID namespace of its own: the
				// server's pid is no process there.
				want["signal:"+server] = "no such process"
			} else {
				// An unprivileged server cannot empty its bounding set;
				// no_new_privs keeps the program from gaining any of it.
				// (This host's bounding set, whatever the test runs in.)
				want["creds"] = "eff=0 prm=0 inh=0 bounding=" + strconv.Itoa(boundingCount()) + " ambient=0 no_new_privs=1 seccomp=2 uid=" + uid + "," + uid + "," + uid
			}
			for _, p := range probes {
				if got[p] != want[p] {
					t.Errorf("%s gave %q, want %q", p, got[p], want[p])
				}
			}
		})
	}
	t.Run("unconfined control", func(t *testing.T) {
		w := newWorld(t, 0, 0)
		got := runProbesAs(t, Spec{Program: w.bin, Unconfined: true}, "packet-socket", "raw-socket", "mknod:"+filepath.Join(w.run, "disk"),
			"unshare", "bpf", "chown:"+filepath.Join(w.run, "mine"), "link-flags", "signal:"+strconv.Itoa(w.server.Process.Pid), "read:"+w.secret)
		for p, r := range got {
			if r != "ok" {
				t.Errorf("unconfined, %s gave %q: the attack does not work even without the sandbox", p, r)
			}
		}
	})
}

func runProbesAs(t *testing.T, spec Spec, probes ...string) map[string]string {
	t.Helper()
	return runProbes(t, spec, probes...)
}

// A program that daemonizes (forks, setsid, its parent exits) is gone when
// its run ends, as root and as non-root; unconfined (the control), it
// outlives the run, as every daemon of a run did before.
func TestNothingOutlivesTheRun(t *testing.T) {
	requireLandlock(t)
	for _, u := range users {
		t.Run(u.name, func(t *testing.T) {
			rep := reportFor(u, 0)
			runAs := u.uid
			if rep.User != nil {
				runAs = rep.User.UID
			}
			w := newWorld(t, u.uid, runAs)
			token := "daemon-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			got := w.attack(t, u, rep, "daemon:"+filepath.Join(w.run, token))
			if got["daemon:"+filepath.Join(w.run, token)] != "ok" {
				t.Fatalf("the daemon did not start: %v", got)
			}
			if pids := daemons(); len(pids) > 0 {
				t.Errorf("the run ended, its daemons %v still run", pids)
			}
		})
	}
	t.Run("unconfined control", func(t *testing.T) {
		w := newWorld(t, 0, 0)
		got := runProbes(t, Spec{Program: w.bin, Unconfined: true}, "daemon:"+filepath.Join(w.run, "pid"))
		pids := daemons()
		for _, p := range pids {
			syscall.Kill(p, syscall.SIGKILL)
		}
		if got["daemon:"+filepath.Join(w.run, "pid")] != "ok" || len(pids) != 1 {
			t.Errorf("unconfined, the daemon (%v) did not outlive its run: %v", pids, got)
		}
	})
}

// daemons are the live processes that the daemon probe started.
func daemons() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if _, live := parentOf(pid); live && strings.Contains(string(env), daemonEnv+"=") && !strings.Contains(string(env), daemonEnv+"=server") {
			out = append(out, pid)
		}
	}
	return out
}

func boundingCount() int {
	n := 0
	for c := 0; c <= lastCap(); c++ {
		if r, _ := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); r == 1 {
			n++
		}
	}
	return n
}

// Each older kernel, played by capping the Landlock ABI on this one: for
// a server as root and as non-root, each promise either holds against its
// attack or the report says it is missing, never neither. Emptying the
// server's file (truncate) is refused from ABI 3, or by the separate uid,
// or (non-root below ABI 3) by the seccomp filter; signalling a process of
// the server's (here not the run's own server, whose pid the filter
// refuses) and a thread of the run's supervisor (whose pid it refuses)
// from ABI 6, or by the separate uid (and the PID namespace).
func TestEachKernelKeepsItsPromisesOrSaysSo(t *testing.T) {
	requireLandlock(t)
	type outcome struct{ truncate, signalServer, signalSupervisor string }
	for _, tc := range []struct {
		user user
		abi  int
		want outcome
	}{
		{users[0], 1, outcome{"EACCES", "no such process", "no such process"}},
		{users[0], 2, outcome{"EACCES", "no such process", "no such process"}},
		{users[0], 3, outcome{"EACCES", "no such process", "no such process"}},
		{users[0], 5, outcome{"EACCES", "no such process", "no such process"}},
		{users[0], 6, outcome{"EACCES", "no such process", "no such process"}},
		{users[0], 7, outcome{"EACCES", "no such process", "no such process"}},
		{users[1], 1, outcome{"EPERM", "ok", "ok"}},
		{users[1], 2, outcome{"EPERM", "ok", "ok"}},
		{users[1], 3, outcome{"EACCES", "ok", "ok"}},
		{users[1], 4, outcome{"EACCES", "ok", "ok"}},
		{users[1], 5, outcome{"EACCES", "ok", "ok"}},
		{users[1], 6, outcome{"EACCES", "EPERM", "EPERM"}},
		{users[1], 7, outcome{"EACCES", "EPERM", "EPERM"}},
	} {
		if tc.abi > kernelABI() {
			continue
		}
		t.Run(tc.user.name+"/ABI "+strconv.Itoa(tc.abi), func(t *testing.T) {
			rep := reportFor(tc.user, tc.abi)
			runAs := tc.user.uid
			if rep.User != nil {
				runAs = rep.User.UID
			}
			w := newWorld(t, tc.user.uid, runAs)
			server := strconv.Itoa(w.server.Process.Pid)
			got := w.attack(t, tc.user, rep, "truncate:"+w.secret, "signal:"+server, "signal-thread:parent")
			g := outcome{got["truncate:"+w.secret], got["signal:"+server], got["signal-thread:parent"]}
			if g != tc.want {
				t.Errorf("got %+v, want %+v", g, tc.want)
			}
			missing := map[string]bool{}
			for _, row := range rep.Missing() {
				missing[row.Promise] = true
			}
			for promise, attack := range map[string]string{NoFileWrite: g.truncate, NoSignal: g.signalServer, NoLeftovers: g.signalSupervisor} {
				if succeeded := attack == "ok"; succeeded != missing[promise] {
					t.Errorf("%s: the attack gave %q but the report says missing=%v:\n%s", promise, attack, missing[promise], rep.Table())
				}
			}
			if b, _ := os.ReadFile(w.secret); tc.want.truncate == "EACCES" && string(b) != "the App's key" {
				t.Errorf("the secret is now %q", b)
			}
		})
	}
}

// The server dies (SIGKILL) while a run's program and the daemon it
// started run -> within a second every process of the run is gone, as
// root and as non-root: the supervisor's parent-death signal ends the run.
// Unconfined (the control), the program and its daemon run on.
func TestARunDiesWithItsServer(t *testing.T) {
	requireLandlock(t)
	for _, tc := range []struct {
		user          user
		off           bool
		before, after int
	}{{users[0], false, 3, 0}, {users[1], false, 3, 0}, {users[0], true, 2, 2}} {
		t.Run(tc.user.name+map[bool]string{true: " unconfined control"}[tc.off], func(t *testing.T) {
			rep := reportFor(tc.user, 0)
			runAs := tc.user.uid
			if rep.User != nil {
				runAs = rep.User.UID
			}
			w := newWorld(t, tc.user.uid, runAs)
			spec := rep.Spec(w.bin, 0)
			spec.ReadWrite, spec.Unconfined = []string{w.run}, tc.off
			raw, _ := json.Marshal(spec)
			token := "run-" + strconv.FormatInt(time.Now().UnixNano(), 36)
			server := exec.Command(w.bin)
			server.Env = append(os.Environ(), serverEnv+"="+string(raw), probesEnv+"=daemon:"+filepath.Join(w.run, "pid")+"\nhang", runEnv+"="+token)
			server.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(tc.user.uid), Gid: uint32(tc.user.uid)}}
			out, err := server.StdoutPipe()
			must(t, err)
			must(t, server.Start())
			t.Cleanup(func() {
				for _, p := range ofRun(token, 0) {
					syscall.Kill(p, syscall.SIGKILL)
				}
			})
			// Until the program says it hangs: its daemon runs then.
			lines := bufio.NewScanner(out)
			for lines.Scan() && lines.Text() != "hang -> running" {
			}
			// The supervisor (not unconfined), the program, the daemon.
			if got := ofRun(token, server.Process.Pid); len(got) != tc.before {
				t.Fatalf("the run's processes before the kill: %v, want %d", got, tc.before)
			}
			must(t, server.Process.Kill())
			server.Wait()
			killed := time.Now()
			for len(ofRun(token, 0)) > tc.after && time.Since(killed) < time.Second {
				time.Sleep(10 * time.Millisecond) // polling the condition, up to its deadline
			}
			if left := ofRun(token, 0); len(left) != tc.after {
				t.Errorf("a second after the server was killed, %v run, want %d", left, tc.after)
			}
		})
	}
}

// runEnv marks the processes of one test's run.
const runEnv = "SANDBOX_TEST_RUN"

// ofRun are the live processes of the run token, but for but.
func ofRun(token string, but int) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == but {
			continue
		}
		env, _ := os.ReadFile("/proc/" + e.Name() + "/environ")
		if _, live := parentOf(pid); live && strings.Contains(string(env), runEnv+"="+token+"\x00") {
			out = append(out, pid)
		}
	}
	return out
}

// serveProbes plays a server of u (the test binary as its uid) that runs
// the launcher with spec, the probes naming the server's pid {server}, and
// returns what each probe gave.
func serveProbes(t *testing.T, u user, spec Spec, probes ...string) map[string]string {
	t.Helper()
	raw, _ := json.Marshal(spec)
	server := exec.Command(spec.Program)
	server.Env = append(os.Environ(), serverEnv+"="+string(raw), probesEnv+"="+strings.Join(probes, "\n"))
	server.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(u.uid), Gid: uint32(u.uid)}}
	server.WaitDelay = 30 * time.Second
	out, err := server.CombinedOutput()
	if err != nil {
		t.Fatalf("server: %v\n%s", err, out)
	}
	return parseProbes(string(out))
}

// A non-root server on an older kernel (the Landlock ABI capped below 6):
// the program signals the server and its supervisor by pid, by process
// group, to everyone, with the pid's upper half set, by tgkill, through a
// pidfd and by SIGIO ownership: the seccomp filter refuses each (before
// it, each worked: the old code gives "ok"). Below ABI 3 it also refuses
// truncating a file the program may only read, by truncate(2) and by
// open(O_RDONLY|O_TRUNC); from ABI 3 Landlock does. The controls: the
// program still ends its own child and writes its own files. What the
// filter cannot refuse is a signal to one of their threads' ids, which
// kill(2) delivers to the process: the report keeps those promises
// missing below ABI 6, and the attack shows why.
func TestSeccompGuardsSignalsAndTruncation(t *testing.T) {
	requireLandlock(t)
	signals := []string{"signal:{server}", "signal:parent", "signal-group:{server}", "signal-group:parent", "signal-all", "signal-own-group",
		"signal-high:{server}", "signal-high:parent", "tgkill:{server}", "tgkill:parent", "pidfd:{server}", "pidfd:parent",
		"setown:{server}", "setown:parent"}
	for _, tc := range []struct {
		abi                     int
		truncate, truncateOpen  string
		threadServer, threadSup string
	}{
		{1, "EPERM", "EPERM", "ok", "ok"},
		{2, "EPERM", "EPERM", "ok", "ok"},
		{3, "EACCES", "EACCES", "ok", "ok"},
		{5, "EACCES", "EACCES", "ok", "ok"},
	} {
		if tc.abi > kernelABI() {
			continue
		}
		t.Run("ABI "+strconv.Itoa(tc.abi), func(t *testing.T) {
			u := users[1]
			rep := reportFor(u, tc.abi)
			w := newWorld(t, u.uid, u.uid)
			ro := filepath.Join(filepath.Dir(w.run), "plugin-cache")
			must(t, os.Mkdir(ro, 0o755))
			cached := filepath.Join(ro, "terraform-provider-null")
			must(t, os.WriteFile(cached, []byte("a provider"), 0o755))
			must(t, os.Chown(cached, u.uid, u.uid))
			spec := rep.Spec(w.bin, 0)
			spec.ReadWrite, spec.ReadOnly = []string{w.run}, []string{ro}
			probes := append(append([]string{}, signals...), "truncate:"+cached, "truncate-open:"+cached,
				"signal-thread:{server}", "signal-thread:parent", "kill-child", "write:"+filepath.Join(w.run, "new"))
			got := serveProbes(t, u, spec, probes...)
			want := map[string]string{"truncate:" + cached: tc.truncate, "truncate-open:" + cached: tc.truncateOpen,
				"signal-thread:{server}": tc.threadServer, "signal-thread:parent": tc.threadSup,
				"kill-child": "ok", "write:" + filepath.Join(w.run, "new"): "ok"}
			for _, p := range signals {
				want[p] = "EPERM"
			}
			for _, p := range probes {
				if got[p] != want[p] {
					t.Errorf("%s gave %q, want %q", p, got[p], want[p])
				}
			}
			if b, _ := os.ReadFile(cached); string(b) != "a provider" {
				t.Errorf("the cached provider is now %q", b)
			}
			if len(rep.Missing()) != 2 {
				t.Errorf("the report says missing %v, want the signal rows alone", rep.Missing())
			}
		})
	}
}

// A non-root server on an older kernel: the program starts a daemon, then
// kills (SIGKILL) its supervisor so nobody ends the daemon. The filter
// refuses the kill and the daemon is gone when the run ends; before it,
// the supervisor died and the daemon ran on.
func TestADaemonDiesEvenIfTheProgramTriesToKillItsSupervisor(t *testing.T) {
	requireLandlock(t)
	u := users[1]
	rep := reportFor(u, 5)
	w := newWorld(t, u.uid, u.uid)
	t.Cleanup(func() {
		for _, p := range daemons() {
			syscall.Kill(p, syscall.SIGKILL)
		}
	})
	pidFile := filepath.Join(w.run, "pid")
	got := w.attack(t, u, rep, "daemon:"+pidFile, "kill:parent")
	if got["daemon:"+pidFile] != "ok" || got["kill:parent"] != "EPERM" {
		t.Fatalf("probes: %v", got)
	}
	if pids := daemons(); len(pids) > 0 {
		t.Errorf("the run ended, its daemons %v still run", pids)
	}
}

// The launcher alone (cmd/strata-sandbox, what the image and the release
// install next to strata) keeps every promise the server's binary keeps as
// its launcher: the same tests, with it in the launcher's place.
func TestTheLauncherAloneKeepsTheSamePromises(t *testing.T) {
	requireLandlock(t)
	dir, err := os.MkdirTemp("", "sandbox-alone-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	must(t, os.Chmod(dir, 0o755)) // the user Terraform runs as execs it too
	alone := filepath.Join(dir, LauncherName)
	build := exec.Command("go", "build", "-o", alone, "strata.dev/strata/cmd/"+LauncherName)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", LauncherName, err, out)
	}
	aloneForTests = alone
	t.Cleanup(func() { aloneForTests = "" })
	t.Run("paths", TestConfinedProgramReachesOnlyItsPaths)
	t.Run("privileges", TestAPullRequestsProgramKeepsNoPrivilege)
	t.Run("daemons", TestNothingOutlivesTheRun)
	t.Run("fails closed", TestLauncherFailsClosed)
}
