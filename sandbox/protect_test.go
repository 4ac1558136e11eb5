package sandbox

import (
	"errors"
	"strings"
	"testing"
)

// Each host, as facts: what keeps each promise there, or what is missing.
// The expected rows are literals; "-" marks a missing promise.
func TestProtectSaysWhatKeepsEachPromise(t *testing.T) {
	root := func(abi int) Facts {
		return Facts{Linux: true, KernelABI: abi, Root: true, SysAdmin: true, Seccomp: true}
	}
	user := func(abi int) Facts { return Facts{Linux: true, KernelABI: abi, Seccomp: true, UID: 1000} }
	for _, tc := range []struct {
		name  string
		facts Facts
		set   Settings
		want  [6]string // in the order of the promises
	}{
		{"non-root on Linux 6.12+ (the image)", user(7), Settings{}, [6]string{
			"Landlock ABI 7", "Landlock ABI 7", "Landlock ABI 7 signal scope", "no capabilities, seccomp filter",
			"supervisor (subreaper, dies with Strata), Landlock ABI 7 signal scope", "no capabilities, seccomp filter, no_new_privs"}},
		{"root on Linux 6.12+", root(7), Settings{}, [6]string{
			"Landlock ABI 7, separate uid 65534", "Landlock ABI 7, separate uid 65534", "Landlock ABI 7 signal scope, separate uid 65534",
			"no capabilities, seccomp filter", "PID namespace, supervisor (subreaper, dies with Strata), Landlock ABI 7 signal scope, separate uid 65534",
			"no capabilities, seccomp filter, no_new_privs, separate uid 65534"}},
		{"root on Linux 5.15 (ABI 1), uid from the config", root(1), Settings{UID: 2000, GID: 3000}, [6]string{
			"Landlock ABI 1, separate uid 2000", "Landlock ABI 1 (write), separate uid 2000 (truncate)", "separate uid 2000",
			"no capabilities, seccomp filter", "PID namespace, supervisor (subreaper, dies with Strata), separate uid 2000",
			"no capabilities, seccomp filter, no_new_privs, separate uid 2000"}},
		{"root in a container without CAP_SYS_ADMIN, Linux 6.1 (ABI 2)", Facts{Linux: true, KernelABI: 2, Root: true, Seccomp: true}, Settings{}, [6]string{
			"Landlock ABI 2, separate uid 65534", "Landlock ABI 2 (write), separate uid 65534 (truncate)", "separate uid 65534",
			"no capabilities, seccomp filter", "supervisor (subreaper, dies with Strata), separate uid 65534",
			"no capabilities, seccomp filter, no_new_privs, separate uid 65534"}},
		{"non-root on Linux 6.1 (ABI 2)", user(2), Settings{}, [6]string{"Landlock ABI 2", "Landlock ABI 2 (write), seccomp filter (truncate)", "-",
			"no capabilities, seccomp filter", "-", "no capabilities, seccomp filter, no_new_privs"}},
		{"non-root on Linux 5.15 (ABI 1)", user(1), Settings{}, [6]string{"Landlock ABI 1", "Landlock ABI 1 (write), seccomp filter (truncate)", "-",
			"no capabilities, seccomp filter", "-", "no capabilities, seccomp filter, no_new_privs"}},
		{"non-root on Linux 6.1 without seccomp", Facts{Linux: true, KernelABI: 2, UID: 1000}, Settings{}, [6]string{"Landlock ABI 2", "-", "-",
			"no capabilities", "-", "no capabilities, no_new_privs"}},
		{"non-root on Linux 6.2 (ABI 3)", user(3), Settings{}, [6]string{"Landlock ABI 3", "Landlock ABI 3", "-", "no capabilities, seccomp filter", "-",
			"no capabilities, seccomp filter, no_new_privs"}},
		{"non-root, ABI capped at 5 by a test", user(7), Settings{Test: Cap{MaxABI: 5}}, [6]string{"Landlock ABI 5", "Landlock ABI 5", "-",
			"no capabilities, seccomp filter", "-", "no capabilities, seccomp filter, no_new_privs"}},
		{"non-root without Landlock nor seccomp", Facts{Linux: true, UID: 1000}, Settings{Mode: BestEffort}, [6]string{"-", "-", "-",
			"no capabilities", "-", "no capabilities, no_new_privs"}},
		{"off", user(7), Settings{Mode: Off}, [6]string{"-", "-", "-", "-", "-", "-"}},
		{"macOS", Facts{}, Settings{}, [6]string{"-", "-", "-", "-", "-", "-"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Protect(tc.facts, tc.set)
			if len(r.Rows) != 6 {
				t.Fatalf("%d rows", len(r.Rows))
			}
			for i, row := range r.Rows {
				got := row.By
				if row.Missing != "" {
					got = "-"
				}
				if got != tc.want[i] {
					t.Errorf("%s: %q, want %q", row.Promise, got, tc.want[i])
				}
			}
		})
	}
}

// `on` refuses when a promise is missing and says which and what to do;
// best_effort and off run.
func TestOnlyOnRefusesAndSaysWhatToDo(t *testing.T) {
	older := Facts{Linux: true, KernelABI: 2, Seccomp: true, UID: 1000}
	for _, tc := range []struct {
		mode    Mode
		facts   Facts
		refused bool
		summary string
	}{
		{On, older, true, "on (landlock ABI 2, seccomp): refuses to run, missing no signal to Strata; no process outliving the run"},
		{BestEffort, older, false, "best_effort (landlock ABI 2, seccomp): runs without no signal to Strata; no process outliving the run"},
		{Off, older, false, "off (server config): Terraform runs unconfined"},
		{On, Facts{Linux: true, KernelABI: 7, Seccomp: true, Root: true, SysAdmin: true}, false, "on (landlock ABI 7, uid 65534, seccomp, pid namespace): every protection"},
	} {
		r := Protect(tc.facts, Settings{Mode: tc.mode})
		if got := r.String(); got != tc.summary {
			t.Errorf("%s: %q, want %q", tc.mode, got, tc.summary)
		}
		err := r.Err()
		if (err != nil) != tc.refused {
			t.Fatalf("%s: err = %v", tc.mode, err)
		}
		if err != nil && (!errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no signal to Strata: signals are scoped from Landlock ABI 6") ||
			!strings.Contains(err.Error(), "sandbox: best_effort")) {
			t.Errorf("%s: %q does not say what is missing and what to do", tc.mode, err)
		}
		if log := r.RunLog(); (log != "") != (tc.mode != On || tc.facts.KernelABI < 6) || (log != "" && !strings.HasPrefix(log, "[strata] sandbox "+string(tc.mode))) {
			t.Errorf("%s: run log %q", tc.mode, log)
		}
	}
}

// Which of the filter's guards each host gets, and what a missing row
// says when the filter narrows it without keeping it: only as the
// server's uid, the truncate guard below ABI 3, the signal guard below 6.
func TestSeccompGuardsOnlyWhereNeeded(t *testing.T) {
	for _, tc := range []struct {
		name                     string
		facts                    Facts
		signals, truncate        bool
		signalMissing, leftovers string
	}{
		{"non-root ABI 2", Facts{Linux: true, KernelABI: 2, Seccomp: true, UID: 1000}, true, true,
			"signals are scoped from Landlock ABI 6 (this host: 2); below, the seccomp filter refuses signals to the server's and this run's supervisor's pids, to process groups and to every process, but kill(2) with the id of one of their threads still reaches them: needs Linux 6.12 " + asRoot,
			"the run's programs can kill its supervisor through the id of one of its threads (the seccomp filter refuses its pid) (same uid, no Landlock signal scope below ABI 6; this host: 2): needs Linux 6.12 " + asRoot},
		{"non-root ABI 5", Facts{Linux: true, KernelABI: 5, Seccomp: true, UID: 1000}, true, false,
			"signals are scoped from Landlock ABI 6 (this host: 5); below, the seccomp filter refuses signals to the server's and this run's supervisor's pids, to process groups and to every process, but kill(2) with the id of one of their threads still reaches them: needs Linux 6.12 " + asRoot,
			"the run's programs can kill its supervisor through the id of one of its threads (the seccomp filter refuses its pid) (same uid, no Landlock signal scope below ABI 6; this host: 5): needs Linux 6.12 " + asRoot},
		{"non-root ABI 6", Facts{Linux: true, KernelABI: 6, Seccomp: true, UID: 1000}, false, false, "", ""},
		{"root ABI 1", Facts{Linux: true, KernelABI: 1, Seccomp: true, Root: true, SysAdmin: true}, false, false, "", ""},
		{"non-root ABI 2 without seccomp", Facts{Linux: true, KernelABI: 2, UID: 1000}, false, false,
			"signals are scoped from Landlock ABI 6 (this host: 2): needs Linux 6.12 " + asRoot,
			"the run's programs can kill its supervisor (same uid, no Landlock signal scope below ABI 6; this host: 2): needs Linux 6.12 " + asRoot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Protect(tc.facts, Settings{Mode: BestEffort})
			if r.SeccompSignals != tc.signals || r.SeccompTruncate != tc.truncate {
				t.Errorf("guards: signals %v truncate %v, want %v %v", r.SeccompSignals, r.SeccompTruncate, tc.signals, tc.truncate)
			}
			if got := r.Rows[2].Missing; got != tc.signalMissing {
				t.Errorf("%s missing %q, want %q", r.Rows[2].Promise, got, tc.signalMissing)
			}
			if got := r.Rows[4].Missing; got != tc.leftovers {
				t.Errorf("%s missing %q, want %q", r.Rows[4].Promise, got, tc.leftovers)
			}
			spec := r.Spec("/bin/true", 0)
			if spec.GuardSignals != tc.signals || spec.GuardTruncate != tc.truncate {
				t.Errorf("spec guards: %v %v", spec.GuardSignals, spec.GuardTruncate)
			}
		})
	}
}

func TestParseMode(t *testing.T) {
	for in, want := range map[string]Mode{"": On, "on": On, "best_effort": BestEffort, "off": Off} {
		if got, err := ParseMode(in); got != want || err != nil {
			t.Errorf("%q: %q, %v", in, got, err)
		}
	}
	if _, err := ParseMode("besteffort"); err == nil || !strings.Contains(err.Error(), "want on, best_effort or off") {
		t.Errorf("besteffort: %v", err)
	}
}
