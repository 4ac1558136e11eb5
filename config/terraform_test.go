package config

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

const terraformYAML = `
terraform:
  env: [AWS_REGION, TF_VAR_org, UNSET_ON_THIS_SERVER]
  layers:
    - repo: acme/infra
      env: {AWS_PROFILE: infra}
    - repo: acme/infra
      layer: network
      env: {AWS_PROFILE: network, TF_VAR_account: "1234"}
    - repo: acme/other
      env: {AWS_PROFILE: other}
  sandbox_paths:
    read_write: [/var/lib/terraform-state]
    read_only: [/etc/terraform.rc]
`

// Variables reach a layer only as the server config says: the names it
// passes from the server's environment, then the values it gives the repo
// and the layer; a layer gets nothing meant for another.
func TestTerraformEnvOfALayer(t *testing.T) {
	file := filepath.Join(t.TempDir(), "strata.yaml")
	if err := os.WriteFile(file, []byte(terraformYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadServer(file, envOf(map[string]string{"AWS_REGION": "eu-west-1", "TF_VAR_org": "acme", "AWS_SECRET_ACCESS_KEY": "not-listed"}))
	if err != nil {
		t.Fatal(err)
	}
	tf := cfg.Terraform
	if tf.SandboxOff() || tf.Sandbox != "on" {
		t.Errorf("sandbox = %q, want on by default", tf.Sandbox)
	}
	for _, tc := range []struct {
		repo, layer string
		want        map[string]string
	}{
		{"acme/infra", "network", map[string]string{"AWS_REGION": "eu-west-1", "TF_VAR_org": "acme", "AWS_PROFILE": "network", "TF_VAR_account": "1234"}},
		{"acme/infra", "app", map[string]string{"AWS_REGION": "eu-west-1", "TF_VAR_org": "acme", "AWS_PROFILE": "infra"}},
		{"evil/fork", "network", map[string]string{"AWS_REGION": "eu-west-1", "TF_VAR_org": "acme"}},
	} {
		if got := tf.EnvOf(tc.repo, tc.layer); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s %s gets %v, want %v", tc.repo, tc.layer, got, tc.want)
		}
	}
	if !reflect.DeepEqual(tf.SandboxPaths, SandboxPaths{ReadWrite: []string{"/var/lib/terraform-state"}, ReadOnly: []string{"/etc/terraform.rc"}}) {
		t.Errorf("sandbox paths = %+v", tf.SandboxPaths)
	}
}

// The environment wins over the file, as for every setting.
func TestTerraformSettingsFromTheEnvironment(t *testing.T) {
	cfg, err := LoadServer("", envOf(map[string]string{
		"STRATA_TERRAFORM_SANDBOX": "off", "STRATA_TERRAFORM_ENV": "AWS_REGION, HTTPS_PROXY",
		"STRATA_TERRAFORM_SANDBOX_READ_WRITE": "/state:/cache2", "STRATA_TERRAFORM_SANDBOX_READ_ONLY": "/etc/tf.rc",
		"AWS_REGION": "us-east-1",
	}))
	if err != nil {
		t.Fatal(err)
	}
	tf := cfg.Terraform
	if !tf.SandboxOff() || !reflect.DeepEqual(tf.Env, []string{"AWS_REGION", "HTTPS_PROXY"}) ||
		!reflect.DeepEqual(tf.SandboxPaths.ReadWrite, []string{"/state", "/cache2"}) || !reflect.DeepEqual(tf.SandboxPaths.ReadOnly, []string{"/etc/tf.rc"}) {
		t.Errorf("terraform = %+v", tf)
	}
	if got := tf.EnvOf("acme/infra", "network"); !reflect.DeepEqual(got, map[string]string{"AWS_REGION": "us-east-1"}) {
		t.Errorf("env = %v", got)
	}

	// `off` unquoted, as operators write it, is the word, not YAML 1.1's false.
	file := filepath.Join(t.TempDir(), "strata.yaml")
	if err := os.WriteFile(file, []byte("terraform:\n  sandbox: off\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if cfg, err := LoadServer(file, envOf(nil)); err != nil || !cfg.Terraform.SandboxOff() {
		t.Errorf("sandbox: off in the file: %v", err)
	}
}

// Strata's own variables, those Strata sets for every run, a sandbox that
// is neither on nor off and relative sandbox paths are refused, each named.
func TestTerraformSettingsRefused(t *testing.T) {
	for _, tc := range []struct{ yaml, want string }{
		{"terraform: {env: [STRATA_GITHUB_PRIVATE_KEY]}", "STRATA_GITHUB_PRIVATE_KEY: Strata's own variables never reach Terraform"},
		{"terraform: {layers: [{repo: acme/infra, env: {strata_github_webhook_secret: x}}]}", "Strata's own variables"},
		{"terraform: {env: [TF_LOG]}", "TF_LOG is set by Strata"},
		{"terraform: {env: [TF_CLI_ARGS_plan]}", "TF_CLI_ARGS_plan is set by Strata"},
		{"terraform: {env: [\"AWS REGION\"]}", "not a variable name"},
		{"terraform: {sandbox: maybe}", `terraform.sandbox "maybe": want on, best_effort or off`},
		{"terraform: {sandbox_user: \"0\"}", `terraform.sandbox_user "0": want UID[:GID], numbers above 0 (Terraform must not run as root)`},
		{"terraform: {layers: [{repo: infra}]}", `terraform.layers[0].repo "infra"`},
		{"terraform: {sandbox_paths: {read_write: [state]}}", `terraform.sandbox_paths.read_write: "state" is not an absolute path`},
	} {
		file := filepath.Join(t.TempDir(), "strata.yaml")
		if err := os.WriteFile(file, []byte(tc.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadServer(file, envOf(nil)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.yaml, err, tc.want)
		}
	}
}
