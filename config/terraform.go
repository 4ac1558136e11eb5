package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"

	"strata.dev/strata/sandbox"
)

// Terraform is what Terraform may see of the server when it runs a PR's
// code: nothing but the variables listed here, and, in the sandbox, the
// run's own files plus the paths listed here.
//
//	terraform:
//	  sandbox: on                      # on (default) | best_effort | off
//	  sandbox_user: "65534:65534"      # who Terraform runs as when Strata is root
//	  env: [AWS_REGION, HTTPS_PROXY]   # passed from the server's environment
//	  layers:
//	    - repo: acme/infra
//	      layer: network               # omitted: every layer of the repo
//	      env: {TF_VAR_account: "1234"}
//	  sandbox_paths:
//	    read_write: [/var/lib/terraform-state]
//	    read_only: [/etc/terraform.rc]
//	  cli_config: /etc/strata/terraform.rc  # TF_CLI_CONFIG_FILE of every run
type Terraform struct {
	// Sandbox is "on" (plans are refused when the host lacks a protection
	// of the sandbox), "best_effort" (they run, and each run's log names
	// what is missing) or "off" (Terraform runs unconfined: say so on
	// purpose). See package sandbox and docs/security.md.
	Sandbox string `yaml:"sandbox"`
	// SandboxUser is "UID[:GID]", who Terraform runs as when Strata runs
	// as root; empty means 65534 (nobody).
	SandboxUser string `yaml:"sandbox_user"`
	// SandboxTest caps what the sandbox uses: for tests only, which play
	// an older kernel or a server that is not root; no key or variable
	// sets it.
	SandboxTest sandbox.Cap `yaml:"-"`
	// Env names variables of the server's environment that every layer
	// gets. Nothing else of the server's environment reaches Terraform.
	Env []string `yaml:"env"`
	// Layers gives variables with their values to the layers of a repo.
	Layers []TerraformLayer `yaml:"layers"`
	// SandboxPaths are paths Terraform may use besides its run's own.
	SandboxPaths SandboxPaths `yaml:"sandbox_paths"`
	// CLIConfig is a Terraform CLI config file every run reads
	// (TF_CLI_CONFIG_FILE), e.g. a provider_installation with a
	// filesystem_mirror; the sandbox opens it and the mirrors it names
	// read-only (config/cliconfig.go).
	CLIConfig string `yaml:"cli_config"`
	// Binaries are the Terraform and OpenTofu binaries layers choose from
	// (config/binaries.go), besides terraform_bin.
	Binaries []Binary `yaml:"binaries"`
	// binariesEnvProblems are the entries of STRATA_TERRAFORM_BINARIES
	// that could not be read.
	binariesEnvProblems []string

	// passed holds the values of Env, read from the server's environment
	// when the config loads.
	passed map[string]string
}

// TerraformLayer is variables for the layers of a repo, or one of them.
type TerraformLayer struct {
	Repo  string            `yaml:"repo"`
	Layer string            `yaml:"layer"`
	Env   map[string]string `yaml:"env"`
}

// SandboxPaths are absolute paths outside the run's work dir that the
// sandbox opens to Terraform: a local backend's state directory, a CLI
// config file, a provider's credentials file.
type SandboxPaths struct {
	ReadWrite []string `yaml:"read_write"`
	ReadOnly  []string `yaml:"read_only"`
}

// SandboxOff reports whether the operator turned the sandbox off.
func (t Terraform) SandboxOff() bool { return t.Sandbox == string(sandbox.Off) }

// SandboxSettings are the sandbox's settings (validated by problems).
func (t Terraform) SandboxSettings() sandbox.Settings {
	mode, _ := sandbox.ParseMode(t.Sandbox)
	uid, gid, _ := parseUser(t.SandboxUser)
	return sandbox.Settings{Mode: mode, UID: uid, GID: gid, Test: t.SandboxTest}
}

// parseUser reads "UID[:GID]" (GID defaults to UID); "" is 0, 0: the
// sandbox's default.
func parseUser(s string) (uid, gid int, err error) {
	if s == "" {
		return 0, 0, nil
	}
	u, g, hasGID := strings.Cut(s, ":")
	if uid, err = strconv.Atoi(u); err != nil || uid <= 0 {
		return 0, 0, fmt.Errorf("terraform.sandbox_user %q: want UID[:GID], numbers above 0 (Terraform must not run as root)", s)
	}
	gid = uid
	if hasGID {
		if gid, err = strconv.Atoi(g); err != nil || gid <= 0 {
			return 0, 0, fmt.Errorf("terraform.sandbox_user %q: want UID[:GID], numbers above 0 (Terraform must not run as root)", s)
		}
	}
	return uid, gid, nil
}

// EnvOf is the variables Terraform gets when it runs layer of repo (owner/name):
// the ones passed from the server's environment, then the values the
// config gives that repo and layer, later entries winning.
func (t Terraform) EnvOf(repo, layer string) map[string]string {
	env := map[string]string{}
	for k, v := range t.passed {
		env[k] = v
	}
	for _, l := range t.Layers {
		if strings.EqualFold(l.Repo, repo) && (l.Layer == "" || l.Layer == layer) {
			for k, v := range l.Env {
				env[k] = v
			}
		}
	}
	return env
}

// applyEnv reads the STRATA_TERRAFORM_* variables, then the values of the
// variables to pass.
func (t *Terraform) applyEnv(getenv func(string) (string, bool)) {
	if v, ok := getenv("STRATA_TERRAFORM_SANDBOX"); ok && v != "" {
		t.Sandbox = v
	}
	if v, ok := getenv("STRATA_TERRAFORM_SANDBOX_USER"); ok && v != "" {
		t.SandboxUser = strings.TrimSpace(v)
	}
	if v, ok := getenv("STRATA_TERRAFORM_ENV"); ok {
		t.Env = splitList(v, ",")
	}
	if v, ok := getenv("STRATA_TERRAFORM_SANDBOX_READ_WRITE"); ok {
		t.SandboxPaths.ReadWrite = splitList(v, string(os.PathListSeparator))
	}
	if v, ok := getenv("STRATA_TERRAFORM_SANDBOX_READ_ONLY"); ok {
		t.SandboxPaths.ReadOnly = splitList(v, string(os.PathListSeparator))
	}
	if v, ok := getenv(CLIConfigEnv); ok {
		t.CLIConfig = strings.TrimSpace(v)
	}
	if v, ok := getenv(BinariesEnv); ok {
		t.Binaries, t.binariesEnvProblems = parseBinaries(v)
	}
	t.passed = map[string]string{}
	for _, name := range t.Env {
		if v, ok := getenv(name); ok {
			t.passed[name] = v
		}
	}
}

func splitList(s, sep string) []string {
	var out []string
	for _, part := range strings.Split(s, sep) {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

func (t *Terraform) applyDefaults() {
	if t.Sandbox == "" {
		t.Sandbox = string(sandbox.On)
	}
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// problems says what is wrong, naming the key and what to do.
func (t Terraform) problems() []string {
	var out []string
	if _, err := sandbox.ParseMode(t.Sandbox); err != nil {
		out = append(out, err.Error())
	}
	if _, _, err := parseUser(t.SandboxUser); err != nil {
		out = append(out, err.Error())
	}
	out = append(out, t.cliConfigProblems()...)
	out = append(out, t.binariesEnvProblems...)
	out = append(out, binariesProblems(t.Binaries)...)
	for _, name := range t.Env {
		if p := envProblem(name); p != "" {
			out = append(out, "terraform.env: "+p)
		}
	}
	for i, l := range t.Layers {
		if strings.Count(l.Repo, "/") != 1 {
			out = append(out, fmt.Sprintf("terraform.layers[%d].repo %q: want owner/name", i, l.Repo))
		}
		for name := range l.Env {
			if p := envProblem(name); p != "" {
				out = append(out, fmt.Sprintf("terraform.layers[%d].env: %s", i, p))
			}
		}
	}
	for key, paths := range map[string][]string{"read_write": t.SandboxPaths.ReadWrite, "read_only": t.SandboxPaths.ReadOnly} {
		for _, p := range paths {
			if !filepath.IsAbs(p) {
				out = append(out, fmt.Sprintf("terraform.sandbox_paths.%s: %q is not an absolute path", key, p))
			}
		}
	}
	return out
}

// envProblem refuses names that are not variables, Strata's own (its
// secrets are among them), and those terraform-exec sets itself; TF_VAR_*
// are fine, the sandbox's launcher passes them.
func envProblem(name string) string {
	switch {
	case !envName.MatchString(name):
		return fmt.Sprintf("%q is not a variable name", name)
	case strings.HasPrefix(strings.ToUpper(name), "STRATA_"):
		return fmt.Sprintf("%s: Strata's own variables never reach Terraform", name)
	case strings.HasPrefix(name, "TF_VAR_"):
		return ""
	case len(tfexec.ProhibitedEnv(map[string]string{name: ""})) > 0:
		return fmt.Sprintf("%s is set by Strata for every run; remove it", name)
	}
	return ""
}
