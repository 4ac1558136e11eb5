package terraform

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"strata.dev/strata/sandbox"
)

// readAttempt is a layer that outputs the file at path, base64-encoded as
// an attacker would, so that redaction cannot see what it carries.
func readAttempt(path string) map[string]string {
	return map[string]string{"main.tf": "output \"stolen\" {\n  value = base64encode(file(" + strconv.Quote(path) + "))\n}\n"}
}

// A PR's layer reads files of the server -> in the sandbox each read is
// refused, and the plan fails without the file's content.
func TestSandboxedLayerCannotReadTheServersFiles(t *testing.T) {
	s := newScenario(t)
	secret := filepath.Join(t.TempDir(), "app-key.pem")
	if err := os.WriteFile(secret, []byte("-----BEGIN RSA PRIVATE KEY-----\nserver-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{secret, "/proc/self/environ", "/proc/" + strconv.Itoa(os.Getpid()) + "/environ"} {
		_, err := Plan(testContext(t), PlanInput{Setup: s.tree(readAttempt(path))})
		// Terraform wraps its message: "permission\ndenied".
		tfErr := tfError(t, err, "plan", "permission")
		if strings.Contains(tfErr.Message, "server-key") || strings.Contains(tfErr.Message, base64.StdEncoding.EncodeToString([]byte("-----BEGIN"))) {
			t.Errorf("reading %s: the error carries the content: %s", path, tfErr.Message)
		}
	}
}

// Terraform's own environment, read where the sandbox is off (the only way
// a layer can read it) -> only what Terraform needs and what the operator
// gave; none of the server's variables, not the launcher's Spec.
func TestLayerSeesOnlyTheVariablesItIsGiven(t *testing.T) {
	t.Setenv("STRATA_GITHUB_WEBHOOK_SECRET", "canary-webhook-secret")
	t.Setenv("TF_VAR_canary", "canary-tf-var")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "canary-credential")
	s := newScenario(t)
	setup := s.tree(readAttempt("/proc/self/environ"))
	setup.Sandbox = &Sandbox{Settings: sandbox.Settings{Mode: sandbox.Off}, ReadWrite: s.sandbox.ReadWrite}
	setup.Env = map[string]string{"AWS_REGION": "eu-west-1", "TF_VAR_given": "by-the-operator"}
	r, err := Plan(testContext(t), PlanInput{Setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`stolen\s+= "([A-Za-z0-9+/=]+)"`).FindStringSubmatch(r.Text)
	if m == nil {
		t.Fatalf("no output in the plan:\n%s", r.Text)
	}
	environ, err := base64.StdEncoding.DecodeString(m[1])
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, kv := range strings.Split(strings.TrimRight(string(environ), "\x00"), "\x00") {
		name, _, _ := strings.Cut(kv, "=")
		names = append(names, name)
	}
	slices.Sort(names)
	t.Logf("Terraform's environment: %v", names)
	allowed := map[string]bool{"HOME": true, "TMPDIR": true, "PATH": true, "CHECKPOINT_DISABLE": true, "TF_PLUGIN_CACHE_DIR": true,
		"TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE": true,
		"TF_IN_AUTOMATION": true, "TF_APPEND_USER_AGENT": true, "TF_LOG": true, "TF_LOG_CORE": true, "TF_LOG_PATH": true, "TF_LOG_PROVIDER": true,
		"AWS_REGION": true, "TF_VAR_given": true}
	for _, k := range fromServer {
		allowed[k] = true
	}
	for _, name := range names {
		if !allowed[name] {
			t.Errorf("Terraform's environment holds %s", name)
		}
	}
	for _, want := range []string{"AWS_REGION", "TF_VAR_given", "HOME", "TMPDIR"} {
		if !slices.Contains(names, want) {
			t.Errorf("Terraform's environment lacks %s: %v", want, names)
		}
	}
	for _, canary := range []string{"canary-webhook-secret", "canary-tf-var", "canary-credential"} {
		if strings.Contains(string(environ), canary) {
			t.Errorf("Terraform's environment holds %q", canary)
		}
	}
}

// Provisioners run /bin/sh in the sandbox: they can work in the layer's
// directory and their temp dir, and cannot write outside.
func TestLocalExecWorksInTheSandbox(t *testing.T) {
	s := newScenario(t)
	outside := filepath.Join(t.TempDir(), "planted")
	files := map[string]string{"main.tf": `
resource "terraform_data" "build" {
  provisioner "local-exec" {
    command = "echo built > built.txt && f=$(mktemp) && echo tmp > $f && cat /etc/hosts > /dev/null"
  }
}

resource "terraform_data" "escape" {
  depends_on = [terraform_data.build]
  provisioner "local-exec" {
    command = "echo planted > ` + outside + `"
  }
}
`}
	plan := s.plan(files)
	setup := s.tree(files)
	_, err := Apply(testContext(t), ApplyInput{Setup: setup, PlanFile: plan.PlanFile})
	tfError(t, err, "apply", "Permission denied")
	if b, err := os.ReadFile(filepath.Join(setup.WorkDir, "built.txt")); err != nil || string(b) != "built\n" {
		t.Errorf("the provisioner in the layer's directory: %q, %v", b, err)
	}
	if _, err := os.Stat(outside); !os.IsNotExist(err) {
		t.Errorf("the provisioner wrote outside the sandbox: %v", err)
	}
}

// An operator's sandbox path that does not exist -> the run fails before
// Terraform starts, naming the path and the setting to fix.
func TestMissingSandboxPathIsNamed(t *testing.T) {
	s := newScenario(t)
	setup := s.tree(map[string]string{"main.tf": threeResources})
	setup.Sandbox = &Sandbox{ReadWrite: append(s.sandbox.ReadWrite, "/nonexistent/terraform-state")}
	_, err := Plan(testContext(t), PlanInput{Setup: setup})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/terraform-state") || !strings.Contains(err.Error(), "terraform.sandbox_paths") {
		t.Fatalf("err = %v, want the path and terraform.sandbox_paths named", err)
	}
}

// A PR's apply runs its own code (a provisioner; in a plan, an `external`
// data source or a provider it ships) and tries to replace a provider in the
// plugin cache that every repository's runs execute -> refused: only init
// may write the cache. The cached file is unchanged and still readable.
func TestPullRequestCodeCannotReplaceACachedProvider(t *testing.T) {
	s := newScenario(t)
	cached := filepath.Join(s.cacheDir, "registry.terraform.io", "hashicorp", "null", "3.2.2", "linux_amd64", "terraform-provider-null_v3.2.2_x5")
	if err := os.MkdirAll(filepath.Dir(cached), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cached, []byte("the real provider"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{"main.tf": `
resource "terraform_data" "poison" {
  provisioner "local-exec" {
    command = "cat ` + cached + ` > /dev/null && echo evil > ` + cached + `"
  }
}
`}
	plan := s.plan(files)
	_, err := Apply(testContext(t), ApplyInput{Setup: s.tree(files), PlanFile: plan.PlanFile})
	tfError(t, err, "apply", "Permission denied")
	if b, err := os.ReadFile(cached); err != nil || string(b) != "the real provider" {
		t.Errorf("cached provider after the attack: %q, %v", b, err)
	}
}
