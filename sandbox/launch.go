package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// init is the launcher: in a process started with a Spec it never returns.
// It runs before main, so none of the server runs in the launcher; only the
// init functions of packages initialized before this one (libraries'
// registrations), with the clean environment the caller gave.
func init() {
	raw, ok := os.LookupEnv(specEnv)
	if !ok {
		return
	}
	// The program must not see the Spec, nor pass it on.
	os.Unsetenv(specEnv)
	err := launch(raw)
	// Fail closed: a program that could not be confined does not run.
	fmt.Fprintf(os.Stderr, "strata sandbox: %v\n", err)
	os.Exit(126)
}

// launch confines this process as raw says and execs the program with this
// process's arguments; it returns only on failure.
func launch(raw string) error {
	var s Spec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return fmt.Errorf("%s: %w", specEnv, err)
	}
	if !filepath.IsAbs(s.Program) {
		return fmt.Errorf("program %q is not an absolute path", s.Program)
	}
	env := os.Environ()
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	if !s.Unconfined {
		if err := confine(s); err != nil {
			return fmt.Errorf("cannot confine %s: %w", filepath.Base(s.Program), err)
		}
	}
	// On the thread that confine restricted (it stays locked to it).
	args := append([]string{s.Program}, os.Args[1:]...)
	return fmt.Errorf("exec %s: %w", s.Program, syscall.Exec(s.Program, args, env))
}
