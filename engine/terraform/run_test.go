package terraform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestVarFilesMustStayInsideTheTree(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"secrets.tfvars": `token = "server-secret"`})
	writeFiles(t, root, map[string]string{
		"layer/main.tf":      `variable "token" {}`,
		"layer/prod.tfvars":  `token = "x"`,
		"common/base.tfvars": `token = "y"`,
	})
	workDir := filepath.Join(root, "layer")
	if err := os.Symlink(filepath.Join(outside, "secrets.tfvars"), filepath.Join(workDir, "link.tfvars")); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		file string
		ok   bool
	}{
		{"prod.tfvars", true},
		{"../common/base.tfvars", true},
		{"../../" + filepath.Base(outside) + "/secrets.tfvars", false},
		{filepath.Join(outside, "secrets.tfvars"), false},
		{"link.tfvars", false},
		{"missing.tfvars", false},
	} {
		_, err := checkVarFiles(workDir, root, []string{tc.file})
		if (err == nil) != tc.ok {
			t.Errorf("var file %q: err = %v, want ok = %v", tc.file, err, tc.ok)
		}
	}

	// Plan refuses before running anything, so no binary is needed.
	_, err := Plan(context.Background(), PlanInput{
		Setup:    Setup{WorkDir: workDir, Root: root, TerraformBin: "/nonexistent/terraform"},
		VarFiles: []string{"link.tfvars"},
	})
	if err == nil || !strings.Contains(err.Error(), "leaves the repository") {
		t.Errorf("Plan with an escaping var file: %v", err)
	}
}

func TestEnvThatTerraformExecManagesIsRefused(t *testing.T) {
	_, err := newSession(context.Background(), Setup{WorkDir: t.TempDir(), TerraformBin: "terraform", Env: map[string]string{"TF_LOG": "trace"}})
	if err == nil || !strings.Contains(err.Error(), "TF_LOG") {
		t.Errorf("err = %v, want TF_LOG refused", err)
	}
	if _, err := newSession(context.Background(), Setup{WorkDir: "relative", TerraformBin: "terraform"}); err == nil {
		t.Error("a relative work dir is accepted")
	}
}

func TestEnvironmentCarriesCacheAndCallerEnv(t *testing.T) {
	t.Setenv("TF_VAR_leak", "from-server")
	env, err := environment(Setup{PluginCacheDir: "/cache", Env: map[string]string{"AWS_REGION": "eu-west-1"}})
	if err != nil {
		t.Fatal(err)
	}
	if env["TF_PLUGIN_CACHE_DIR"] != "/cache" || env["AWS_REGION"] != "eu-west-1" || env["CHECKPOINT_DISABLE"] != "1" {
		t.Errorf("env = %v", env)
	}
	if _, ok := env["TF_VAR_leak"]; ok {
		t.Error("the server's TF_VAR_ variables reach the layer")
	}
	if _, err := environment(Setup{PluginCacheDir: "relative"}); err == nil {
		t.Error("a relative plugin cache dir is accepted")
	}
}

func TestCacheLockSerializesInits(t *testing.T) {
	path := filepath.Join(t.TempDir(), cacheLockName)
	unlock, err := lockFile(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := lockFile(ctx, path); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("second lock while held: %v, want to wait until the deadline", err)
	}

	got := make(chan error, 1)
	go func() {
		unlock2, err := lockFile(context.Background(), path)
		if err == nil {
			unlock2()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("second lock taken while held (err %v)", err)
	case <-time.After(50 * time.Millisecond):
	}
	unlock()
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("second lock not taken after release")
	}
}
