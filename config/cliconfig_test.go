package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// terraform.cli_config (or its variable) names the CLI config of every run;
// one that Terraform could not read is refused at load, saying why.
func TestTerraformCLIConfig(t *testing.T) {
	dir := t.TempDir()
	mirror := filepath.Join(dir, "mirror")
	if err := os.Mkdir(mirror, 0o755); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(dir, "terraform.rc")
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(rc, "provider_installation {\n  filesystem_mirror {\n    path = \""+mirror+"\"\n  }\n}\n")
	file := filepath.Join(dir, "strata.yaml")
	write(file, "terraform:\n  cli_config: "+rc+"\n")
	cfg, err := LoadServer(file, envOf(nil))
	if err != nil || cfg.Terraform.CLIConfig != rc {
		t.Fatalf("cli_config = %q, %v", cfg.Terraform.CLIConfig, err)
	}
	cfg, err = LoadServer("", envOf(map[string]string{CLIConfigEnv: rc}))
	if err != nil || cfg.Terraform.CLIConfig != rc {
		t.Fatalf("%s: cli_config = %q, %v", CLIConfigEnv, cfg.Terraform.CLIConfig, err)
	}

	noMirror := filepath.Join(dir, "no-mirror.rc")
	write(noMirror, "provider_installation {\n  filesystem_mirror {\n    path = \"/nonexistent/mirror\"\n  }\n}\n")
	broken := filepath.Join(dir, "broken.rc")
	write(broken, "provider_installation {\n")
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{CLIConfigEnv: filepath.Join(dir, "missing.rc")}, "missing.rc: stat"},
		{map[string]string{CLIConfigEnv: filepath.Join(dir, "missing.rc")}, "create the file, or remove terraform.cli_config"},
		{map[string]string{CLIConfigEnv: "terraform.rc"}, "terraform.cli_config terraform.rc: not an absolute path"},
		{map[string]string{CLIConfigEnv: dir}, "not a regular file"},
		{map[string]string{CLIConfigEnv: noMirror}, "provider mirror /nonexistent/mirror"},
		{map[string]string{CLIConfigEnv: broken}, "broken.rc"},
		{map[string]string{CLIConfigEnv: rc, "STRATA_TERRAFORM_ENV": "TF_CLI_CONFIG_FILE"}, "keep one"},
	} {
		if _, err := LoadServer("", envOf(tc.env)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: err = %v, want %q", tc.env, err, tc.want)
		}
	}
}
