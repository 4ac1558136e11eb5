package terraform

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The same stubborn Terraform, sandboxed: the supervisor passes the
// interrupt on, and once the grace period is over it kills Terraform and
// every process it started (the script's sleeps), before terraform-exec's
// own kill is due.
func TestCancelledSandboxedRunInterruptsThenKillsEverything(t *testing.T) {
	s := newScenario(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "terraform")
	script := strings.Replace(stubbornTerraform, "echo started >> .signals", "sleep 6017 & echo started >> .signals", 1)
	if err := os.WriteFile(bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	setup := s.tree(map[string]string{})
	setup.TerraformBin, setup.StopGrace = bin, testStopGrace
	signals := filepath.Join(setup.WorkDir, ".signals")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Plan(ctx, PlanInput{Setup: setup})
		done <- err
	}()
	waitFile(t, signals, "started")
	// The script forked its sleep before it said "started", but the fork
	// may not have exec'd sleep yet on a busy machine: wait until it has.
	before := waitSleepers(t)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled plan succeeded")
		}
	case <-time.After(DefaultStopGrace):
		t.Fatal("the sandboxed Terraform that ignores its interrupt was not killed after its grace period")
	}
	if b, _ := os.ReadFile(signals); !strings.Contains(string(b), "interrupted") {
		t.Fatalf("Terraform was killed without an interrupt first; it saw: %q", b)
	}
	if len(before) == 0 {
		t.Fatal("the script's sleep never ran: the test proves nothing")
	}
	if after := sleepers(); len(after) > 0 {
		t.Errorf("the cancelled run's processes %v still run", after)
	}
}

// waitSleepers waits until a `sleep 6017` runs, and returns them.
func waitSleepers(t *testing.T) []int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if pids := sleepers(); len(pids) > 0 {
			return pids
		}
		if time.Now().After(deadline) {
			return nil
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sleepers are the live `sleep 6017` processes.
func sleepers() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		stat, _ := os.ReadFile("/proc/" + e.Name() + "/stat")
		if string(cmd) == "sleep\x006017\x00" && !strings.Contains(string(stat), ") Z ") {
			out = append(out, pid)
		}
	}
	return out
}
