package sandbox

import (
	"fmt"
	"strings"
)

// The promises the sandbox makes about a pull request's code, in the
// user's words: the rows of the Report, of docs/security.md's table, and of
// the web UI's.
const (
	NoSecretRead  = "no read of Strata's secrets"
	NoFileWrite   = "no write or truncate of Strata's files"
	NoSignal      = "no signal to Strata"
	NoSniffing    = "no traffic sniffed"
	NoLeftovers   = "no process outliving the run"
	NoHostAdmin   = "no host administration"
	landlockSince = "Landlock (Linux 5.13 or later, landlock in the kernel's lsm= list)"
	asRoot        = "or Strata running as root (Terraform then runs as a separate unprivileged uid)"
)

// Facts are what the host gives the sandbox: the kernel and the user the
// server runs as. Detect reads them; Protect decides from them.
type Facts struct {
	// Linux is false on macOS and Windows: no sandbox at all.
	Linux bool
	// KernelABI is the kernel's Landlock ABI version, 0 without Landlock.
	KernelABI int
	// Root says the server runs as uid 0 with CAP_SETUID and CAP_SETGID:
	// it can run Terraform as a separate user.
	Root bool
	// SysAdmin says it holds CAP_SYS_ADMIN: it can start Terraform in a
	// new PID namespace.
	SysAdmin bool
	// Seccomp says the kernel takes seccomp filters.
	Seccomp bool
	// UID is the server's uid, for the report.
	UID int
}

// Row is one promise: the mechanisms that keep it on this host, or what is
// missing and what would provide it.
type Row struct {
	Promise string `json:"promise"`
	By      string `json:"by,omitempty"`
	Missing string `json:"missing,omitempty"`
}

// Report is what the sandbox does on this host and which promise rests on
// what. The start log, /readyz, `strata version`, the web UI and every
// run's log show it.
type Report struct {
	Mode Mode `json:"mode"`
	// ABI is the Landlock ABI the sandbox restricts with; KernelABI the
	// kernel's (ABI is lower only when a test caps it).
	ABI       int `json:"abi"`
	KernelABI int `json:"kernel_abi"`
	// StrataUID is the server's uid; User who Terraform runs as when it is
	// not the server's.
	StrataUID int         `json:"strata_uid"`
	User      *Credential `json:"user,omitempty"`
	// PIDNamespace and Seccomp say whether those apply.
	PIDNamespace bool `json:"pid_namespace"`
	Seccomp      bool `json:"seccomp"`
	// SeccompSignals and SeccompTruncate say whether the filter also
	// refuses signals to the server and the run's supervisor, and
	// truncation a Landlock below ABI 3 does not check: only where
	// neither Landlock nor a separate uid keeps those promises.
	SeccompSignals  bool  `json:"seccomp_signals,omitempty"`
	SeccompTruncate bool  `json:"seccomp_truncate,omitempty"`
	Rows            []Row `json:"rows"`
}

// Protect decides, for each promise, what keeps it with these facts and
// settings. Pure: Detect gathers the facts.
func Protect(f Facts, s Settings) Report {
	r := Report{Mode: s.Mode, KernelABI: f.KernelABI, StrataUID: f.UID}
	if r.Mode == "" {
		r.Mode = On
	}
	promises := []string{NoSecretRead, NoFileWrite, NoSignal, NoSniffing, NoLeftovers, NoHostAdmin}
	if r.Mode == Off || !f.Linux {
		why := "the server config says terraform.sandbox: off"
		if !f.Linux {
			why = "the sandbox exists only on Linux"
		}
		for _, p := range promises {
			r.Rows = append(r.Rows, Row{Promise: p, Missing: why})
		}
		return r
	}
	r.ABI = f.KernelABI
	if s.Test.MaxABI > 0 && s.Test.MaxABI < r.ABI {
		r.ABI = s.Test.MaxABI
	}
	if s.Test.NotRoot {
		f.Root, f.SysAdmin = false, false
	}
	r.Seccomp = f.Seccomp
	r.PIDNamespace = f.SysAdmin
	// As the server's uid, only Landlock stands between the program and
	// Strata's processes and files: the filter adds what it lacks.
	r.SeccompTruncate = f.Seccomp && !f.Root && r.ABI < 3
	r.SeccompSignals = f.Seccomp && !f.Root && r.ABI < 6
	uid := ""
	if f.Root {
		r.User = &Credential{UID: orDefault(s.UID), GID: orDefault(s.GID)}
		uid = fmt.Sprintf("separate uid %d", r.User.UID)
	}
	landlock := fmt.Sprintf("Landlock ABI %d", r.ABI)
	noCaps := "no capabilities"
	if f.Seccomp {
		noCaps += ", seccomp filter"
	}
	row := func(p string, missing string, by ...string) Row {
		var kept []string
		for _, b := range by {
			if b != "" {
				kept = append(kept, b)
			}
		}
		if len(kept) == 0 {
			return Row{Promise: p, Missing: missing}
		}
		return Row{Promise: p, By: strings.Join(kept, ", ")}
	}
	when := func(ok bool, s string) string {
		if ok {
			return s
		}
		return ""
	}

	r.Rows = append(r.Rows, row(NoSecretRead, "needs "+landlockSince, when(r.ABI >= 1, landlock), when(r.ABI >= 1, uid)))
	switch {
	case r.ABI >= 3:
		r.Rows = append(r.Rows, row(NoFileWrite, "", landlock, uid))
	case r.ABI >= 1 && f.Root:
		r.Rows = append(r.Rows, row(NoFileWrite, "", landlock+" (write)", uid+" (truncate)"))
	case r.ABI >= 1 && r.SeccompTruncate:
		r.Rows = append(r.Rows, row(NoFileWrite, "", landlock+" (write)", "seccomp filter (truncate)"))
	case r.ABI >= 1:
		r.Rows = append(r.Rows, row(NoFileWrite, fmt.Sprintf("truncate(2) is not restricted below Landlock ABI 3 (this host: %d): needs Linux 6.2 %s", r.ABI, asRoot)))
	default:
		r.Rows = append(r.Rows, row(NoFileWrite, "needs "+landlockSince))
	}
	scoped := when(r.ABI >= 6, landlock+" signal scope")
	// The filter refuses what names Strata's processes by pid, but kill(2)
	// given the id of any thread of a process signals the process, and
	// the server's and the supervisor's threads' ids are not known to a
	// filter loaded once: it narrows the promise, it does not keep it.
	partly := ""
	if r.SeccompSignals {
		partly = "; below, the seccomp filter refuses signals to the server's and this run's supervisor's pids, to process groups and to every process, but kill(2) with the id of one of their threads still reaches them"
	}
	r.Rows = append(r.Rows, row(NoSignal, fmt.Sprintf("signals are scoped from Landlock ABI 6 (this host: %d)%s: needs Linux 6.12 %s", r.ABI, partly, asRoot), scoped, uid))
	r.Rows = append(r.Rows, row(NoSniffing, "", noCaps))
	// The supervisor ends the run's processes; it can do so only if they
	// cannot kill it first.
	supervisor := "supervisor (subreaper, dies with Strata)"
	if r.PIDNamespace {
		supervisor = "PID namespace, " + supervisor
	}
	if scoped == "" && uid == "" {
		how := "the run's programs can kill its supervisor"
		if r.SeccompSignals {
			how += " through the id of one of its threads (the seccomp filter refuses its pid)"
		}
		r.Rows = append(r.Rows, row(NoLeftovers, fmt.Sprintf("%s (same uid, no Landlock signal scope below ABI 6; this host: %d): needs Linux 6.12 %s", how, r.ABI, asRoot)))
	} else {
		r.Rows = append(r.Rows, row(NoLeftovers, "", supervisor, scoped, uid))
	}
	r.Rows = append(r.Rows, row(NoHostAdmin, "", noCaps+", no_new_privs", uid))
	return r
}

func orDefault(id int) int {
	if id == 0 {
		return DefaultUser
	}
	return id
}

// Missing are the promises this host does not keep.
func (r Report) Missing() []Row {
	var out []Row
	for _, row := range r.Rows {
		if row.Missing != "" {
			out = append(out, row)
		}
	}
	return out
}

// Err is nil when Terraform may run: every promise is kept, or the server
// config accepts what is missing (best_effort, off). Otherwise it names
// what is missing and what to do.
func (r Report) Err() error {
	missing := r.Missing()
	if r.Mode != On || len(missing) == 0 {
		return nil
	}
	var b strings.Builder
	for _, row := range missing {
		fmt.Fprintf(&b, "; %s: %s", row.Promise, row.Missing)
	}
	return fmt.Errorf("%w (terraform.sandbox: on)%s. Provide what is missing, or set `terraform: {sandbox: best_effort}` "+
		"in the server config to run with it missing (every run's log then says so), or `sandbox: off` to run Terraform unconfined",
		ErrUnavailable, b.String())
}

// String is the one-line summary the start log, /readyz and `strata
// version` show after "sandbox: ".
func (r Report) String() string {
	if r.Mode == Off {
		return "off (server config): Terraform runs unconfined"
	}
	var how []string
	if r.ABI > 0 {
		how = append(how, fmt.Sprintf("landlock ABI %d", r.ABI))
	} else {
		how = append(how, "no landlock")
	}
	if r.User != nil {
		how = append(how, fmt.Sprintf("uid %d", r.User.UID))
	}
	if r.Seccomp {
		how = append(how, "seccomp")
	}
	if r.PIDNamespace {
		how = append(how, "pid namespace")
	}
	s := fmt.Sprintf("%s (%s)", r.Mode, strings.Join(how, ", "))
	missing := r.Missing()
	if len(missing) == 0 {
		return s + ": every protection"
	}
	names := make([]string, len(missing))
	for i, row := range missing {
		names[i] = row.Promise
	}
	verdict := "runs without"
	if r.Mode == On {
		verdict = "refuses to run, missing"
	}
	return s + ": " + verdict + " " + strings.Join(names, "; ")
}

// Table is the report as lines: the summary, then one line per promise.
func (r Report) Table() string {
	var b strings.Builder
	fmt.Fprintf(&b, "sandbox: %s\n", r)
	for _, row := range r.Rows {
		if row.Missing != "" {
			fmt.Fprintf(&b, "  %-40s MISSING: %s\n", row.Promise, row.Missing)
		} else {
			fmt.Fprintf(&b, "  %-40s %s\n", row.Promise, row.By)
		}
	}
	return b.String()
}

// RunLog is what a run's log says first when a protection is missing (and
// why it ran anyway); nothing when every promise is kept.
func (r Report) RunLog() string {
	missing := r.Missing()
	if len(missing) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "[strata] sandbox %s: this run lacks %d of the sandbox's protections (server config terraform.sandbox: %s)\n", r.Mode, len(missing), r.Mode)
	for _, row := range missing {
		fmt.Fprintf(&b, "[strata]   missing %s: %s\n", row.Promise, row.Missing)
	}
	return b.String()
}
