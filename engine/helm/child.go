package helm

import (
	"context"
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

// A PR's chart is rendered by Helm's install or upgrade, and Go's
// templates cannot be interrupted: a template that loops for hours holds
// a CPU (and its memory) for hours, whatever the context says. So the
// whole Test runs in a child process, the strata binary (or a test binary)
// started again with a testSpec in its environment, whose init in this
// package runs it and exits before main. The child is killed, with its
// process group, when the rendering outlasts the release's timeout or the
// job ends; its heap is bounded.

// testEnv carries the testSpec to the child.
const testEnv = "STRATA_HELM_TEST"

// resultFD is the child's end of the pipe its messages go through (the
// first of ExtraFiles), so nothing a library prints can garble them.
const resultFD = 3

// The child's bounds. The heap holds the chart (at most maxChartBytes
// decompressed, held twice or so), its rendering and client-go's caches;
// the report holds at most maxLogBytes of logs per container.
const (
	childMemoryBytes = 2 << 30
	maxMessageBytes  = 256 << 20
)

// renderGrace is what the install or upgrade may take beyond the release's
// timeout before it created its revision: connecting, discovering the
// cluster's API, installing the chart's CRDs, and rendering. A chart that
// renders for longer is killed there.
var renderGrace = 30 * time.Second

// ErrRenderTimeout is an install or upgrade that did not render the chart
// within the release's timeout and renderGrace: the child was killed.
var ErrRenderTimeout = errors.New("the chart's templates did not render in time")

// Kube is a cluster: its kubeconfig file and context.
type Kube struct {
	Name       string `json:"name"` // the cluster's name in the server config, for errors
	Kubeconfig string `json:"kubeconfig"`
	Context    string `json:"context,omitempty"`
}

// testSpec is one Test, as the child needs it.
type testSpec struct {
	Kube  Kube  `json:"kube"`
	Input Input `json:"input"`
}

// message is what the child writes to resultFD: Rendered once the
// revision is created, then the outcome.
type message struct {
	Rendered bool    `json:"rendered,omitempty"`
	Done     bool    `json:"done,omitempty"`
	Report   *Report `json:"report,omitempty"`
	Err      string  `json:"err,omitempty"`
	Kind     string  `json:"kind,omitempty"` // the name of the sentinel Err wraps, in sentinels
}

// sentinels are the errors a caller tells apart with errors.Is, by name
// across the process boundary.
var sentinels = map[string]error{
	"outside":   ErrOutsideTree,
	"too-large": ErrChartTooLarge,
	"schema":    ErrSchemaRef,
}

func init() {
	raw, ok := os.LookupEnv(testEnv)
	if !ok {
		return
	}
	os.Unsetenv(testEnv)
	os.Exit(child(raw))
}

// child runs the Test raw says and writes its messages; its exit code is 0
// when the outcome was written, whatever the Test gave.
func child(raw string) int {
	enc := json.NewEncoder(os.NewFile(resultFD, "result"))
	var spec testSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "strata helm test: %s: %v\n", testEnv, err)
		return 125
	}
	// The heap's bound: a chart that needs more dies here, not the server.
	if err := childproc.LimitMemory(childMemoryBytes); err != nil {
		fmt.Fprintf(os.Stderr, "strata helm test: memory limit: %v\n", err)
		return 125
	}
	out := message{Done: true}
	cfg, logs, err := Connect(spec.Kube, spec.Input.Namespace)
	if err != nil {
		err = fmt.Errorf("cluster %s: %w", spec.Kube.Name, err)
	} else {
		out.Report, err = test(context.Background(), cfg, logs, spec.Input, func() {
			_ = enc.Encode(message{Rendered: true})
		})
	}
	if err != nil {
		out.Err = err.Error()
		for name, s := range sentinels {
			if errors.Is(err, s) {
				out.Kind = name
			}
		}
	}
	if err := enc.Encode(out); err != nil {
		fmt.Fprintf(os.Stderr, "strata helm test: writing the result: %v\n", err)
		return 125
	}
	return 0
}

// childError is an error of the child, said as it said it.
type childError struct {
	msg  string
	kind error
}

func (e *childError) Error() string { return e.msg }
func (e *childError) Unwrap() error { return e.kind }

// TestInChild is Test on the cluster k, run in a child process that is
// killed, with every process it started, when the install or upgrade has
// not rendered the chart within in.Timeout and renderGrace, or when ctx
// ends. It returns when the child is gone.
func TestInChild(ctx context.Context, k Kube, in Input) (*Report, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("starting the Helm test: %w", err)
	}
	spec, err := json.Marshal(testSpec{Kube: k, Input: in})
	if err != nil {
		return nil, fmt.Errorf("starting the Helm test: %w", err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("starting the Helm test: %w", err)
	}
	defer r.Close()
	stderr := &childproc.HeadBuffer{Max: 4 << 10}
	cmd := exec.Command(self)
	cmd.Env = append(childEnv(), testEnv+"="+string(spec))
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = stderr
	cmd.SysProcAttr = childproc.Attr()
	cmd.WaitDelay = 5 * time.Second // should a process outside the group hold stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		return nil, fmt.Errorf("starting the Helm test: %w", err)
	}
	pid := cmd.Process.Pid

	rendered := make(chan struct{})
	done := make(chan message, 1)
	readErr := make(chan error, 1)
	go func() {
		lr := &io.LimitedReader{R: r, N: maxMessageBytes}
		dec := json.NewDecoder(lr)
		for {
			var m message
			if err := dec.Decode(&m); err != nil {
				if lr.N <= 0 {
					err = fmt.Errorf("the Helm test's report is larger than %d bytes", maxMessageBytes)
				}
				readErr <- err
				return
			}
			if m.Rendered {
				close(rendered)
				continue
			}
			done <- m
			return
		}
	}()

	renderTimeout := in.Timeout + renderGrace
	deadline := time.NewTimer(renderTimeout)
	defer deadline.Stop()
	var got message
	var outcome error
	waitRendered := (<-chan struct{})(rendered)
	for finished := false; !finished; {
		select {
		case got = <-done:
			finished = true
		case err := <-readErr:
			outcome, finished = err, true
		case <-waitRendered:
			waitRendered = nil // rendered: the job's context bounds the rest
			deadline.Stop()
		case <-deadline.C:
			outcome, finished = fmt.Errorf("release %s: %w: stopped after %s (the test timeout %s and %s to reach the cluster); make them faster, or set a longer test.timeout",
				in.ReleaseName, ErrRenderTimeout, words.Duration(renderTimeout), words.Duration(in.Timeout), words.Duration(renderGrace)), true
		case <-ctx.Done():
			outcome, finished = ctx.Err(), true
		}
	}
	_ = syscall.Kill(-pid, syscall.SIGKILL) // the group: whatever the child started and left
	waitErr := cmd.Wait()

	switch {
	case outcome != nil && errors.Is(outcome, ErrRenderTimeout):
		return nil, outcome
	case outcome != nil && ctx.Err() != nil:
		return nil, ctx.Err() // the job's end, not the chart's fault
	case outcome != nil && childproc.OutOfMemory(stderr.String()):
		return nil, fmt.Errorf("release %s: %w: the Helm test needed more than %d bytes of memory", in.ReleaseName, ErrChartTooLarge, childMemoryBytes)
	case outcome != nil:
		return nil, fmt.Errorf("the Helm test process failed (%v, %v): %s", outcome, waitErr, strings.TrimSpace(stderr.String()))
	case got.Err != "":
		return got.Report, &childError{msg: got.Err, kind: sentinels[got.Kind]}
	}
	return got.Report, nil
}

// childEnv is the child's environment: the server's, without Strata's own
// settings (its secrets stay with it). A kubeconfig's exec credential
// plugin may need the rest (cloud credentials, PATH, HOME); templates
// cannot read the environment (Helm has no env function).
func childEnv() []string {
	env := []string{"GOTRACEBACK=none"} // a crash says its cause, not every goroutine's stack
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "STRATA_") && !strings.HasPrefix(kv, "GOTRACEBACK=") {
			env = append(env, kv)
		}
	}
	return env
}
