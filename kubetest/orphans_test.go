package kubetest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// pidsEnv names the file where TestPanicsWithTheClusterUp writes the pids
// of the control plane, when it runs as the child of TestNoOrphansOnPanic.
const pidsEnv = "KUBETEST_PIDS_FILE"

// A test binary that panics with the cluster up -> none of the cluster's
// processes outlives it, though no deferred stop ran.
func TestNoOrphansOnPanic(t *testing.T) {
	if os.Getenv(pidsEnv) != "" {
		t.Skip("this is the child")
	}
	get(t) // the binaries are there, or this skips (fails under STRATA_REQUIRE_TOOLS)
	pidsFile := filepath.Join(t.TempDir(), "pids")
	cmd := exec.Command(os.Args[0], "-test.run=^TestPanicsWithTheClusterUp$", "-test.count=1")
	// The child's data dir, which no stop removed, goes with the test's.
	cmd.Env = append(os.Environ(), pidsEnv+"="+pidsFile, "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "panic: the test panics") {
		t.Fatalf("child did not panic (%v):\n%s", err, out)
	}
	b, err := os.ReadFile(pidsFile)
	if err != nil {
		t.Fatalf("child wrote no pids: %v\n%s", err, out)
	}
	pids := strings.Fields(string(b))
	if len(pids) != len(binaries) {
		t.Fatalf("pids %v, want one per component", pids)
	}
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		for _, p := range pids {
			pid, _ := strconv.Atoi(p)
			if syscall.Kill(pid, 0) == nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("control plane processes %v outlived the panicking test binary", pids)
	}
}

// TestPanicsWithTheClusterUp is the child of TestNoOrphansOnPanic.
func TestPanicsWithTheClusterUp(t *testing.T) {
	file := os.Getenv(pidsEnv)
	if file == "" {
		t.Skip("run by TestNoOrphansOnPanic")
	}
	Namespace(t)
	var pids []string
	for _, cmd := range started.procs {
		pids = append(pids, strconv.Itoa(cmd.Process.Pid))
	}
	if err := os.WriteFile(file, []byte(strings.Join(pids, " ")), 0o644); err != nil {
		t.Fatal(err)
	}
	panic("the test panics")
}
