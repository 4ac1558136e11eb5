package terraform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/engine/terraform/terraformtest"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/tooltest"
)

// terraformBin is the binary under test: $STRATA_TERRAFORM_BIN, else
// terraform on PATH. Without one the test skips, or fails when tools are
// required (tooltest).
func terraformBin(t *testing.T) string {
	t.Helper()
	bin, err := FindBinary()
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		tooltest.Missing(t, "terraform ($"+BinaryEnv+" or PATH)", err)
	}
	return bin
}

// scenario is one layer's history: a state and a plugin cache that outlive
// the trees each run extracts, as on the server, where Terraform runs
// sandboxed with the state's directory opened to it.
type scenario struct {
	t         *testing.T
	bin       string
	statePath string
	cacheDir  string
	sandbox   *Sandbox
}

func newScenario(t *testing.T) *scenario {
	t.Helper()
	dir := t.TempDir()
	stateDir := filepath.Join(dir, "state")
	if err := os.MkdirAll(stateDir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &scenario{
		t:         t,
		bin:       terraformBin(t),
		statePath: filepath.Join(stateDir, "terraform.tfstate"),
		cacheDir:  filepath.Join(dir, "plugin-cache"),
		sandbox:   requireSandbox(t, stateDir),
	}
}

// requireSandbox is the server's sandbox with readWrite opened. Without
// Landlock the test skips, or fails when tools are required (tooltest).
func requireSandbox(t *testing.T, readWrite ...string) *Sandbox {
	t.Helper()
	if err := sandbox.Detect(sandbox.Settings{}).Err(); err != nil {
		tooltest.Missing(t, "Landlock", err)
	}
	return &Sandbox{ReadWrite: readWrite}
}

// tree extracts a fresh tree holding the layer at layer/ with these files,
// the backend block added, and returns the layer's setup.
func (s *scenario) tree(files map[string]string) Setup {
	s.t.Helper()
	root := s.t.TempDir()
	workDir := filepath.Join(root, "layer")
	if err := os.MkdirAll(workDir, 0o755); err != nil {
		s.t.Fatal(err)
	}
	files = withFile(files, "backend.tf", terraformtest.BackendBlock(s.statePath))
	writeFiles(s.t, workDir, files)
	return Setup{
		WorkDir:        workDir,
		Root:           root,
		TerraformBin:   s.bin,
		PluginCacheDir: s.cacheDir,
		Sandbox:        s.sandbox,
		Log:            testLog{s.t},
	}
}

func (s *scenario) plan(files map[string]string, varFiles ...string) *PlanResult {
	s.t.Helper()
	r, err := Plan(testContext(s.t), PlanInput{Setup: s.tree(files), VarFiles: varFiles})
	if err != nil {
		s.t.Fatalf("plan: %v", err)
	}
	return r
}

func (s *scenario) apply(files map[string]string, plan *PlanResult) *ApplyResult {
	s.t.Helper()
	r, err := Apply(testContext(s.t), ApplyInput{Setup: s.tree(files), PlanFile: plan.PlanFile})
	if err != nil {
		s.t.Fatalf("apply: %v", err)
	}
	return r
}

func withFile(files map[string]string, name, content string) map[string]string {
	out := map[string]string{name: content}
	for k, v := range files {
		out[k] = v
	}
	return out
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// tfError asserts err is an *Error of command whose message says want.
func tfError(t *testing.T, err error, command, want string) *Error {
	t.Helper()
	var tfErr *Error
	if !errors.As(err, &tfErr) {
		t.Fatalf("want *Error from %s, got %T: %v", command, err, err)
	}
	if tfErr.Command != command || !strings.Contains(tfErr.Message, want) {
		t.Fatalf("want %s error saying %q, got %s: %q", command, want, tfErr.Command, tfErr.Message)
	}
	if strings.Contains(tfErr.Message, "\x1b[") {
		t.Fatalf("message keeps colour codes: %q", tfErr.Message)
	}
	return tfErr
}

// testLog sends the live log to the test's log, shown with -v or on failure.
type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
