package version

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// scripts/release builds a binary that says the version it was given (the
// -X flag names this package's real variable), and a SHA256SUMS that
// sha256sum -c accepts. One platform only, to keep the test cheap: the
// others are the same build with another GOOS/GOARCH.
func TestReleaseScriptStampsAndSums(t *testing.T) {
	if testing.Short() {
		t.Skip("builds strata")
	}
	out := t.TempDir()
	cmd := exec.Command("../scripts/release", "v9.8.7-test")
	cmd.Env = append(os.Environ(), "STRATA_RELEASE_TARGETS=linux/amd64", "STRATA_RELEASE_DIR="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("scripts/release: %v\n%s", err, b)
	}
	sums, err := os.ReadFile(filepath.Join(out, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(strings.TrimSpace(string(sums)), "  strata_v9.8.7-test_linux_amd64.tar.gz") {
		t.Fatalf("SHA256SUMS:\n%s", sums)
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = out
	if b, err := check.CombinedOutput(); err != nil || string(b) != "strata_v9.8.7-test_linux_amd64.tar.gz: OK\n" {
		t.Fatalf("sha256sum -c: %v\n%s", err, b)
	}
	if b, err := exec.Command("tar", "-xzf", filepath.Join(out, "strata_v9.8.7-test_linux_amd64.tar.gz"), "-C", out).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, b)
	}
	dir := filepath.Join(out, "strata_v9.8.7-test_linux_amd64")
	for _, f := range []string{"strata", "strata-sandbox", "LICENSE", "README.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the archive lacks %s: %v", f, err)
		}
	}
	run := exec.Command(filepath.Join(dir, "strata"), "version")
	run.Env = []string{"PATH=/usr/bin:/bin"} // no STRATA_* of the test's environment
	b, err := run.Output()
	if first, _, _ := strings.Cut(string(b), "\n"); err != nil || first != "strata v9.8.7-test" {
		t.Fatalf("strata version: %v, first line %q, want %q\n%s", err, first, "strata v9.8.7-test", b)
	}
	// Terraform starts through the launcher alone, from the archive.
	if want := "sandbox launcher: " + filepath.Join(dir, "strata-sandbox") + "\n"; !strings.HasSuffix(string(b), want) {
		t.Errorf("strata version ends %q, want %q", b, want)
	}
}
