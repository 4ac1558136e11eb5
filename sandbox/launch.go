package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// init is the launcher: in a process started with a Spec it never returns.
// It runs before main, so none of the server runs in the launcher; only the
// init functions of packages initialized before this one (libraries'
// registrations), with the clean environment the caller gave. The caller
// starts it as the supervisor (specEnv); the supervisor starts it again as
// the confined side (confineEnv).
func init() {
	if raw, ok := os.LookupEnv(confineEnv); ok {
		os.Unsetenv(confineEnv)
		fail(confineAndExec(raw))
	}
	raw, ok := os.LookupEnv(specEnv)
	if !ok {
		return
	}
	// The program must not see the Spec, nor pass it on.
	os.Unsetenv(specEnv)
	s, err := readSpec(raw)
	if err != nil {
		fail(err)
	}
	widenOutput()
	if s.Unconfined {
		fail(execProgram(s))
	}
	code, err := supervise(s, raw)
	if err != nil {
		fail(err)
	}
	os.Exit(code)
}

// fail ends a launcher that could not do what its Spec says: nothing runs
// (fail closed), and the reason is on stderr, which the run's log shows.
func fail(err error) {
	fmt.Fprintf(os.Stderr, "strata sandbox: %v\n", err)
	os.Exit(126)
}

func readSpec(raw string) (Spec, error) {
	var s Spec
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields() // a field this launcher does not know is a confinement it would skip
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("%s: %w", specEnv, err)
	}
	if s.Protocol != specProtocol {
		return s, fmt.Errorf("this launcher (%s) is of another build than the server that started it (Spec protocol %q, this launcher's %q): "+
			"install strata and %s from one release", os.Args[0], s.Protocol, specProtocol, LauncherName)
	}
	if !filepath.IsAbs(s.Program) {
		return s, fmt.Errorf("program %q is not an absolute path", s.Program)
	}
	return s, nil
}

// execProgram replaces this process with the program, this process's
// arguments and environment, plus the Spec's variables; it returns only on
// failure.
func execProgram(s Spec) error {
	env := os.Environ()
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	args := append([]string{s.Program}, os.Args[1:]...)
	return fmt.Errorf("exec %s: %w", s.Program, syscall.Exec(s.Program, args, env))
}
