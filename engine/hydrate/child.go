package hydrate

import (
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"strata.dev/strata/engine/childproc"
	"strata.dev/strata/words"
)

// A build runs in a child process: the strata binary (or a test binary)
// started again with a buildSpec in its environment, whose init in this
// package builds and exits before main. krusty takes no context, so a
// build in a goroutine could only be abandoned; a child is killed, with
// every process it started (git, for an allowed remote base), when the
// build times out or the job ends.

// buildEnv carries the buildSpec to the child.
const buildEnv = "STRATA_HYDRATE_BUILD"

// resultFD is the child's end of the pipe its result goes through (the
// first of ExtraFiles), so nothing a library prints can garble it.
const resultFD = 3

// buildSpec is one build, as the child needs it.
type buildSpec struct {
	Root        string   `json:"root"`
	Source      string   `json:"source"`
	AllowRemote []string `json:"allow_remote,omitempty"`
	Limits      Limits   `json:"limits"`
}

// buildResult is what the child writes to resultFD.
type buildResult struct {
	Built *built
	Err   string // the build's error, as it would be said in-process
	Kind  string // the name of the sentinel Err wraps, in sentinels
}

// sentinels are the errors a caller tells apart with errors.Is, by name
// across the process boundary.
var sentinels = map[string]error{
	"remote":   ErrRemote,
	"outside":  ErrOutsideRoot,
	"limit":    ErrLimit,
	"helm":     errHelmCharts,
	"readonly": errReadOnly,
}

func init() {
	raw, ok := os.LookupEnv(buildEnv)
	if !ok {
		return
	}
	os.Unsetenv(buildEnv)
	os.Exit(child(raw))
}

// child builds as raw says and writes the result; its exit code is 0 when
// the result was written, whatever the build gave.
func child(raw string) int {
	out := os.NewFile(resultFD, "result")
	var spec buildSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "strata build: %s: %v\n", buildEnv, err)
		return 125
	}
	limits := spec.Limits.orDefault()
	// The heap's bound: a build that needs more dies here, not the server.
	if err := childproc.LimitMemory(uint64(limits.MemoryBytes)); err != nil {
		fmt.Fprintf(os.Stderr, "strata build: memory limit: %v\n", err)
		return 125
	}
	var res buildResult
	b, err := buildTree(spec.Root, spec.Source, spec.AllowRemote, limits)
	if err != nil {
		res.Err = err.Error()
		for name, s := range sentinels {
			if errors.Is(err, s) {
				res.Kind = name
			}
		}
	} else {
		res.Built = b
	}
	if err := gob.NewEncoder(out).Encode(&res); err != nil {
		fmt.Fprintf(os.Stderr, "strata build: writing the result: %v\n", err)
		return 125
	}
	return 0
}

// buildError is an error of the child, said as it said it.
type buildError struct {
	msg  string
	kind error
}

func (e *buildError) Error() string { return e.msg }
func (e *buildError) Unwrap() error { return e.kind }

// build runs the build of in in a child process within in.Timeout
// (DefaultTimeout when zero) and ctx, and returns when the child and
// every process it started are gone.
func build(parent context.Context, in Input) (*built, error) {
	timeout := in.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	limits := in.Limits.orDefault()

	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the build: %w", err)
	}
	// The child's own temporary directory: kustomize clones remote bases
	// there, and it goes with the build, however the build ends.
	tmp, err := os.MkdirTemp("", "strata-build-")
	if err != nil {
		return nil, fmt.Errorf("starting the build: %w", err)
	}
	defer os.RemoveAll(tmp)
	spec, _ := json.Marshal(buildSpec{Root: in.Root, Source: in.Source, AllowRemote: in.AllowRemote, Limits: limits})

	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the build: %w", err)
	}
	defer r.Close()
	stderr := &childproc.HeadBuffer{Max: 4 << 10}
	cmd := exec.Command(self)
	cmd.Dir = tmp
	cmd.Env = append(childEnv(tmp), buildEnv+"="+string(spec))
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = stderr
	cmd.SysProcAttr = childproc.Attr()
	cmd.WaitDelay = 5 * time.Second // should a process outside the group hold stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, fmt.Errorf("starting the build: %w", err)
	}
	pid := cmd.Process.Pid
	stop := func() { _ = syscall.Kill(-pid, syscall.SIGKILL) }

	type read struct {
		res buildResult
		err error
	}
	done := make(chan read, 1)
	go func() {
		var res buildResult
		lr := &io.LimitedReader{R: r, N: limits.OutputBytes + 16<<20} // the YAML, the inputs, the framing
		err := gob.NewDecoder(lr).Decode(&res)
		if err != nil && lr.N <= 0 {
			err = fmt.Errorf("%w: the build's output is larger than %d bytes", ErrLimit, limits.OutputBytes)
		}
		done <- read{res, err}
	}()
	var got read
	finished := false
	select {
	case got = <-done:
		finished = true
	case <-ctx.Done():
	}
	stop() // the group: whatever the child started and left
	waitErr := cmd.Wait()

	switch {
	case !finished && parent.Err() != nil:
		return nil, parent.Err() // the job's end, not the build's fault
	case !finished:
		return nil, fmt.Errorf("kustomize build did not finish within %s: make it faster (a remote base?), or ask the operator for a longer server config hydrate.timeout: %w",
			words.Duration(timeout), ErrTimeout)
	case got.err != nil && childproc.OutOfMemory(stderr.String()):
		return nil, fmt.Errorf("%s: %w: the build needed more than %d bytes of memory", in.Source, ErrLimit, limits.MemoryBytes)
	case got.err != nil:
		return nil, fmt.Errorf("the build process failed (%v, %v): %s", got.err, waitErr, strings.TrimSpace(stderr.String()))
	case got.res.Err != "":
		return nil, &buildError{msg: got.res.Err, kind: sentinels[got.res.Kind]}
	case got.res.Built == nil:
		return nil, fmt.Errorf("the build process gave no result (%v)", waitErr)
	}
	return got.res.Built, nil
}

// childEnv is the build's environment: what git needs to fetch an allowed
// remote base, nothing of the server's own (its secrets stay with it).
func childEnv(tmp string) []string {
	// A crash says its cause, not every goroutine's stack.
	env := []string{"TMPDIR=" + tmp, "GOTRACEBACK=none"}
	for _, k := range []string{"PATH", "HOME", "USER", "LANG",
		"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
		"SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO", "GIT_SSH_COMMAND", "SSH_AUTH_SOCK", "GIT_CONFIG_GLOBAL",
		"GOCOVERDIR"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}
