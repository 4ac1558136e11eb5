// Package sandbox runs a program (Terraform) confined with Linux Landlock:
// it may write only in the directories of its run and read only the system
// files a program needs; nothing else of the server's (its data dir, the
// App's key, /proc of other processes) is there for it.
//
// The confining happens in a small re-exec of the current binary: the
// caller runs Launcher() in place of the program, with a Spec in the
// environment; this package's init, linked into every binary that runs
// Terraform, sees the Spec, removes it from the environment, restricts the
// process and execs the program with the same arguments. The restriction
// is inherited by every process the program starts (providers, local-exec
// shells), and no process can lift it, not even by running the launcher
// again.
package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
)

// specEnv carries the Spec from the caller to the launcher.
const specEnv = "STRATA_SANDBOX_SPEC"

// MinABI is the oldest Landlock ABI the sandbox accepts: ABI 3 (Linux 6.2)
// restricts truncate(2), without which a confined program could still
// empty any file it can reach, such as the database.
const MinABI = 3

// ErrUnavailable says the kernel cannot confine Terraform and the server
// config did not turn the sandbox off.
var ErrUnavailable = errors.New("Terraform cannot run sandboxed")

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
	// Unconfined execs the program without Landlock: the server config
	// says `sandbox: off`.
	Unconfined bool `json:"unconfined,omitempty"`
}

// Launcher is the program to run in place of a confined one: this binary,
// whose init does the confining.
func Launcher() (string, error) {
	return os.Executable()
}

// Variable is the environment variable that hands s to the launcher.
func (s Spec) Variable() (name, value string) {
	b, _ := json.Marshal(s) // strings, a bool and a map of strings: cannot fail
	return specEnv, string(b)
}

// Status is whether Terraform runs confined on this host.
type Status struct {
	// ABI is the kernel's Landlock ABI version; 0 without Landlock.
	ABI int
	// Off says the server config turned the sandbox off.
	Off bool
}

// Detect asks the kernel; off is the server config's `sandbox: off`.
func Detect(off bool) Status {
	return Status{ABI: kernelABI(), Off: off}
}

// String is what the start-up log, /readyz and `strata version` show after
// "sandbox: ".
func (s Status) String() string {
	switch {
	case s.Off:
		return "off (server config)"
	case s.ABI >= MinABI:
		return fmt.Sprintf("landlock ABI %d", s.ABI)
	case s.ABI == 0:
		return "unavailable (this kernel has no Landlock)"
	}
	return fmt.Sprintf("unavailable (Landlock ABI %d, Strata needs %d)", s.ABI, MinABI)
}

// Err is nil when Terraform may run: confined, or unconfined on purpose.
// Otherwise it says what to do.
func (s Status) Err() error {
	if s.Off || s.ABI >= MinABI {
		return nil
	}
	return fmt.Errorf("%w: sandbox %s. Run Strata on Linux 6.2 or later with Landlock enabled "+
		"(the kernel's lsm= list names landlock), or set `terraform: {sandbox: off}` in the server config "+
		"to run Terraform unconfined, with every file the server can read in reach of a pull request's code",
		ErrUnavailable, s)
}
