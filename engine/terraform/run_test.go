package terraform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
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

// Terraform's environment holds what it needs and what the operator gives
// it, nothing else of the server's: no STRATA_* secret, no credential the
// server happens to have, no TF_VAR_ of the server's.
func TestEnvironmentIsOnlyWhatTerraformNeedsAndTheOperatorGives(t *testing.T) {
	server := map[string]string{
		"PATH": "/opt/tools:/usr/bin", "HTTP_PROXY": "http://proxy:3128", "HTTPS_PROXY": "http://proxy:3128",
		"NO_PROXY": "10.0.0.0/8", "http_proxy": "http://proxy:3128", "https_proxy": "http://proxy:3128", "no_proxy": "localhost",
		"STRATA_GITHUB_WEBHOOK_SECRET": "server-secret", "AWS_SECRET_ACCESS_KEY": "server-credential",
		"TF_VAR_leak": "from-server", "HOME": "/root", "TF_CLI_CONFIG_FILE": "/etc/server.tfrc",
	}
	for k, v := range server {
		t.Setenv(k, v)
	}
	sc := scratch("/run/strata-terraform-1")
	env, launcherEnv, err := environment(Setup{PluginCacheDir: "/cache", Sandbox: &Sandbox{},
		Env: map[string]string{"AWS_REGION": "eu-west-1", "TF_VAR_account": "1234"}}, sc)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"HOME": "/run/strata-terraform-1/home", "TMPDIR": "/run/strata-terraform-1/tmp",
		"CHECKPOINT_DISABLE": "1", "TF_PLUGIN_CACHE_DIR": "/cache", "AWS_REGION": "eu-west-1",
		"TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE": "true",
	}
	for _, k := range fromServer {
		want[k] = server[k]
	}
	if !reflect.DeepEqual(env, want) {
		t.Errorf("env = %v\nwant  %v", env, want)
	}
	if !reflect.DeepEqual(launcherEnv, map[string]string{"TF_VAR_account": "1234"}) {
		t.Errorf("the launcher passes %v, want the operator's TF_VAR_account only", launcherEnv)
	}

	if _, _, err := environment(Setup{Env: map[string]string{"TF_VAR_account": "1234"}}, sc); err == nil {
		t.Error("TF_VAR_ without the launcher is accepted, and would be dropped")
	}
	if _, _, err := environment(Setup{PluginCacheDir: "relative"}, sc); err == nil {
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

	// The deadline above proved that a held lock waits. A waiter gets it
	// once it is released, and notes whether it was: an order, not a pause.
	var released atomic.Bool
	got := make(chan bool, 1)
	go func() {
		unlock2, err := lockFile(context.Background(), path)
		if err != nil {
			t.Error(err)
			got <- false
			return
		}
		got <- released.Load()
		unlock2()
	}()
	released.Store(true)
	unlock()
	select {
	case afterRelease := <-got:
		if !afterRelease {
			t.Fatal("second lock taken while held")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("second lock not taken after release")
	}
}
