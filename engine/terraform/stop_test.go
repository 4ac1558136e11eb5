package terraform

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// stubbornTerraform answers `version` like Terraform, and otherwise notes
// each interrupt in .signals in its working directory and keeps running: a
// Terraform that does not stop when asked (a provider stuck in a call).
const stubbornTerraform = `#!/bin/sh
if [ "$1" = version ]; then
  echo '{"terraform_version":"1.5.7","platform":"linux_amd64","provider_selections":{},"terraform_outdated":false}'
  exit 0
fi
trap 'echo interrupted >> .signals' INT
echo started >> .signals
while :; do sleep 1 </dev/null >/dev/null 2>&1 & wait $!; done
`

// A run cancelled while Terraform does not stop (its lease lost) -> Terraform
// gets an interrupt first, and is killed once the grace period is over, so
// the run ends instead of outliving its lease.
func TestCancelledRunInterruptsThenKillsTerraform(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "terraform")
	if err := os.WriteFile(bin, []byte(stubbornTerraform), 0o755); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "layer")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	signals := filepath.Join(work, ".signals")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Plan(ctx, PlanInput{Setup: Setup{WorkDir: work, TerraformBin: bin, StopGrace: testStopGrace}})
		done <- err
	}()
	waitFile(t, signals, "started")
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a cancelled plan succeeded")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Terraform that ignores its interrupt was never killed: the cancelled run goes on")
	}
	if b, _ := os.ReadFile(signals); !strings.Contains(string(b), "interrupted") {
		t.Fatalf("Terraform was killed without an interrupt first; it saw: %q", b)
	}
}

// testStopGrace is long enough for the script's trap to run on a busy
// machine before the kill: with 200 ms, a CI run with the e2e tests beside
// it once killed the shell before it was scheduled to note the interrupt.
const testStopGrace = 2 * time.Second

// waitFile waits until the file at path holds want.
func waitFile(t *testing.T, path, want string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, _ := os.ReadFile(path); strings.Contains(string(b), want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never said %q", path, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
