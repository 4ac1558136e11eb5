package terraform

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-exec/tfexec"
)

// fromServer are the server's variables that Terraform gets as they are:
// where programs are, and the proxies it must go through. Nothing else of
// the server's environment reaches Terraform unless Setup.Env names it.
var fromServer = []string{"PATH", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"}

// defaultPath is PATH for a server that has none.
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// environment is everything Terraform's environment holds: PATH and the
// proxies of the server's, HOME and TMPDIR in the run's scratch dir, the
// plugin cache, the CLI config, no update checks, then the caller's Env,
// which wins.
// terraform-exec adds TF_IN_AUTOMATION and its own TF_LOG* and
// TF_APPEND_USER_AGENT, and refuses the variables it manages (TF_INPUT,
// TF_CLI_ARGS*, TF_WORKSPACE, ...): those in Env are an error, except
// TF_VAR_*, which only the sandbox's launcher can pass (launcherEnv).
func environment(s Setup, sc scratch) (env, launcherEnv map[string]string, err error) {
	env = map[string]string{
		"HOME":               sc.home(),
		"TMPDIR":             sc.tmp(),
		"CHECKPOINT_DISABLE": "1", // no update checks from a server
		"PATH":               defaultPath,
	}
	for _, k := range fromServer {
		if v, ok := os.LookupEnv(k); ok {
			env[k] = v
		}
	}
	if s.PluginCacheDir != "" {
		if !filepath.IsAbs(s.PluginCacheDir) {
			return nil, nil, fmt.Errorf("terraform: plugin cache dir %q is not absolute", s.PluginCacheDir)
		}
		env["TF_PLUGIN_CACHE_DIR"] = s.PluginCacheDir
		// Without it, Terraform (1.4 and later) takes a provider from the
		// cache only when the layer's lock file already has its checksum;
		// otherwise it installs it again, rewriting the cached binary in
		// place while the plans of other layers execute it: "text file
		// busy" under the init lock, and one unpacking per init. With it,
		// a layer without a lock file entry uses the cached provider (the
		// lock file the run writes is thrown away with its work dir); a
		// layer whose lock file lists checksums is still held to them.
		env["TF_PLUGIN_CACHE_MAY_BREAK_DEPENDENCY_LOCK_FILE"] = "true"
	}
	if s.CLIConfigFile != "" {
		if !filepath.IsAbs(s.CLIConfigFile) {
			return nil, nil, fmt.Errorf("terraform: CLI config file %q is not absolute", s.CLIConfigFile)
		}
		env["TF_CLI_CONFIG_FILE"] = s.CLIConfigFile
	}
	launcherEnv = map[string]string{}
	var bad []string
	for k, v := range s.Env {
		switch {
		case strings.HasPrefix(k, "TF_VAR_"):
			launcherEnv[k] = v
		case len(tfexec.ProhibitedEnv(map[string]string{k: v})) > 0:
			bad = append(bad, k)
		default:
			env[k] = v
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, nil, fmt.Errorf("terraform: env %s is managed by Strata", strings.Join(bad, ", "))
	}
	if s.State != nil {
		s.State.env(env)
	}
	if len(launcherEnv) > 0 && s.Sandbox == nil {
		return nil, nil, fmt.Errorf("terraform: env: TF_VAR_ variables reach Terraform only through the sandbox's launcher (Setup.Sandbox)")
	}
	return env, launcherEnv, nil
}

// scratch is a run's private directory: HOME and TMPDIR of its commands,
// and where its saved plan goes. In the sandbox it is one of the few places
// Terraform may write.
type scratch string

func newScratch() (scratch, error) {
	dir, err := os.MkdirTemp("", "strata-terraform-")
	if err != nil {
		return "", fmt.Errorf("terraform: scratch dir: %w", err)
	}
	sc := scratch(dir)
	for _, d := range []string{sc.home(), sc.tmp()} {
		if err := os.Mkdir(d, 0o700); err != nil {
			sc.remove()
			return "", fmt.Errorf("terraform: scratch dir: %w", err)
		}
	}
	return sc, nil
}

func (sc scratch) home() string            { return filepath.Join(string(sc), "home") }
func (sc scratch) tmp() string             { return filepath.Join(string(sc), "tmp") }
func (sc scratch) file(name string) string { return filepath.Join(string(sc), name) }
func (sc scratch) remove()                 { _ = os.RemoveAll(string(sc)) }
