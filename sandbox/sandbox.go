// Package sandbox runs a program (Terraform) so that a pull request's code,
// which Terraform runs (providers, `local-exec` provisioners, `external`
// data sources), keeps none of the server's reach: it reads and writes only
// the files of its run (Landlock), holds no capability and no privilege
// (a separate unprivileged uid when the server is root, no_new_privs, a
// seccomp filter), cannot signal the server, and leaves no process behind.
//
// It happens in two small re-execs of the launcher: strata-sandbox beside
// the strata binary (cmd/strata-sandbox, which links this package alone),
// else the current binary. The caller runs Launcher() in place of the
// program, with a Spec in the environment; this package's init, linked into
// both, sees it and becomes the supervisor (supervise_linux.go): it starts
// the launcher once more as the confined side, which restricts itself (confine_linux.go) and
// execs the program with the same arguments. The supervisor stays to end
// every process of the run when the program ends or the server dies.
//
// What each protection rests on depends on the kernel and the user the
// server runs as: Detect computes it as a Report (protect.go), which the
// start log, /readyz, `strata version`, the web UI and each run's log show.
package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"
)

// specEnv carries the Spec from the caller to the supervisor; confineEnv
// from the supervisor to the confined side.
const (
	specEnv    = "STRATA_SANDBOX_SPEC"
	confineEnv = "STRATA_SANDBOX_CONFINE"
)

// ErrUnavailable says the sandbox lacks a protection and the server config
// (`terraform.sandbox: on`) does not let Terraform run without it.
var ErrUnavailable = errors.New("Terraform cannot run sandboxed")

// Mode is the server config's `terraform.sandbox`.
type Mode string

const (
	// On refuses to run Terraform when a protection is missing.
	On Mode = "on"
	// BestEffort runs it with what this host gives, and says in every
	// run's log what is missing.
	BestEffort Mode = "best_effort"
	// Off runs it unconfined.
	Off Mode = "off"
)

// ParseMode reads a `terraform.sandbox` value; "" is On.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return On, nil
	case On, BestEffort, Off:
		return m, nil
	}
	return "", fmt.Errorf("terraform.sandbox %q: want on, best_effort or off", s)
}

// DefaultUser is the uid and gid Terraform runs as when the server runs as
// root: nobody and nogroup on Debian, Alpine and Red Hat alike.
const DefaultUser = 65534

// Settings are the server config's sandbox settings.
type Settings struct {
	Mode Mode
	// UID and GID are the separate user Terraform runs as when the server
	// is root (`terraform.sandbox_user`); zero means DefaultUser.
	UID, GID int
	// Test caps what the sandbox uses below what the host gives.
	Test Cap
}

// Cap is set by tests only (no config key or variable reaches it), to play
// an older kernel or a server that is not root on this host.
type Cap struct {
	// MaxABI caps the Landlock ABI; zero means the kernel's.
	MaxABI int
	// NotRoot uses no separate user and no PID namespace, as for a server
	// that is not root: Terraform runs as the server's uid, without
	// capabilities.
	NotRoot bool
}

// Credential is a user and group.
type Credential struct {
	UID int `json:"uid"`
	GID int `json:"gid"`
}

// Spec is one confined program.
type Spec struct {
	// Program is the binary to exec, absolute; it may be read and executed.
	Program string `json:"program"`
	// ReadWrite are directories and files the program may read, write and
	// execute; ReadOnly those it may read and execute. Each must exist.
	ReadWrite []string `json:"read_write,omitempty"`
	ReadOnly  []string `json:"read_only,omitempty"`
	// Env is added to the program's environment by the launcher: variables
	// that the caller cannot set itself (terraform-exec refuses TF_VAR_*).
	Env map[string]string `json:"env,omitempty"`
	// Unconfined execs the program without any of the confinement: the
	// server config says `terraform.sandbox: off`.
	Unconfined bool `json:"unconfined,omitempty"`
	// ABI is the Landlock ABI to restrict with (Report.ABI); zero restricts
	// no file (best_effort on a kernel without Landlock).
	ABI int `json:"abi,omitempty"`
	// User, when set, is who the program runs as (Report.User).
	User *Credential `json:"user,omitempty"`
	// PIDNamespace starts the program as the first process of a new PID
	// namespace, which the kernel empties when it ends (Report.PIDNamespace).
	PIDNamespace bool `json:"pid_namespace,omitempty"`
	// Seccomp loads the filter (Report.Seccomp).
	Seccomp bool `json:"seccomp,omitempty"`
	// GuardSignals and GuardTruncate add the filter's refusals of signals
	// to the server and the supervisor, and of truncation by path
	// (Report.SeccompSignals, Report.SeccompTruncate).
	GuardSignals  bool `json:"guard_signals,omitempty"`
	GuardTruncate bool `json:"guard_truncate,omitempty"`
	// Protected are the pids the signal guard protects: the server's and
	// the supervisor's, which the supervisor sets for the confined side.
	Protected []int `json:"protected,omitempty"`
	// Parent is the pid of the process that starts the launcher: the
	// supervisor ends the run when it is gone.
	Parent int `json:"parent"`
	// StopGrace is how long the program has, once interrupted, before the
	// supervisor kills every process of the run.
	StopGrace time.Duration `json:"stop_grace,omitempty"`
	// Protocol is the shape of the Spec the server wrote (specProtocol),
	// which the launcher must share: Variable sets it.
	Protocol string `json:"protocol"`
}

// LauncherName is the launcher on its own (cmd/strata-sandbox), which the
// image and the release install next to the strata binary.
const LauncherName = "strata-sandbox"

// Launcher is the program to run in place of a confined one: the launcher
// on its own when it lies next to this binary, else this binary, whose init
// does the same. Either way it is this package's init; the one alone links
// nothing else, so its re-execs skip the server's libraries' inits.
func Launcher() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", err
	}
	return launcherNextTo(self), nil
}

// launcherNextTo is the launcher beside the binary self, when it is an
// executable regular file, else self.
func launcherNextTo(self string) string {
	alone := filepath.Join(filepath.Dir(self), LauncherName)
	if fi, err := os.Stat(alone); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return alone
	}
	return self
}

// specProtocol names the Spec's shape: its fields, their types and their
// names in JSON. A launcher of another build (an strata-sandbox left from
// an older release next to a newer strata) would drop the fields it does not
// know, the seccomp filter or the user among them, and confine less than
// the server asked: readSpec refuses a Spec whose protocol is not its own.
var specProtocol = func() string {
	h := sha256.New()
	t := reflect.TypeFor[Spec]()
	for i := range t.NumField() {
		f := t.Field(i)
		fmt.Fprintf(h, "%s %s %s\n", f.Name, f.Type, f.Tag.Get("json"))
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}()

// Variable is the environment variable that hands s to the launcher.
func (s Spec) Variable() (name, value string) {
	s.Protocol = specProtocol
	b, _ := json.Marshal(s) // strings, numbers, bools, a map of strings: cannot fail
	return specEnv, string(b)
}

// Spec is what the launcher does on this host, for program: r says which
// mechanisms apply, the caller adds the paths.
func (r Report) Spec(program string, grace time.Duration) Spec {
	return Spec{Program: program, Unconfined: r.Mode == Off, ABI: r.ABI, User: r.User,
		PIDNamespace: r.PIDNamespace, Seccomp: r.Seccomp, GuardSignals: r.SeccompSignals, GuardTruncate: r.SeccompTruncate,
		Parent: os.Getpid(), StopGrace: grace}
}
