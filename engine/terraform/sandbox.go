package terraform

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"strata.dev/strata/sandbox"
)

// Sandbox is how the server confines Terraform (package sandbox): its
// commands run through the launcher, which restricts them to the run's
// tree, its scratch dir, the plugin cache, the Terraform binary, the
// system files a program needs, and the paths below; with no privilege, as
// a separate user when the server is root, and ends every process of the
// run with it.
type Sandbox struct {
	// Settings are the server config's (`terraform.sandbox`,
	// `terraform.sandbox_user`).
	Settings sandbox.Settings
	// ReadWrite and ReadOnly are paths the operator adds (a local
	// backend's state directory, a credentials file); each must exist.
	ReadWrite, ReadOnly []string
}

// stopBackstop is how long terraform-exec waits, after the sandbox's own
// grace period, before it kills the launcher: the supervisor ends the run
// itself, and only a stuck one is killed.
const stopBackstop = 5 * time.Second

// command is the program terraform-exec runs and its environments: the
// Terraform binary itself without a sandbox, else the launcher, with the
// Spec that says what the binary may touch. initEnv is init's: the only
// command that may write the shared plugin cache. The others only read and
// execute it: a PR's plan runs its own code (an `external` data source, a
// provider it ships), which must not replace a cached provider that every
// other repository's runs then execute.
func command(s Setup, bin string, sc scratch) (launch, error) {
	env, launcherEnv, err := environment(s, sc)
	if err != nil {
		return launch{}, err
	}
	if s.Sandbox == nil {
		return launch{exe: bin, env: env, initEnv: env}, nil
	}
	r := sandbox.Detect(s.Sandbox.Settings)
	if err := r.Err(); err != nil {
		return launch{}, err
	}
	// The launcher execs the binary from the layer's directory: the path
	// must not depend on PATH or the current directory.
	if bin, err = exec.LookPath(bin); err == nil {
		bin, err = filepath.Abs(bin)
	}
	if err != nil {
		return launch{}, fmt.Errorf("terraform: binary: %w", err)
	}
	launcher, err := sandbox.Launcher()
	if err != nil {
		return launch{}, fmt.Errorf("terraform: sandbox launcher: %w", err)
	}
	if r.User != nil {
		// The user Terraform runs as reads its own copy of the CLI config:
		// the operator's file stays as private as it is.
		if err := copyCLIConfig(env, sc); err != nil {
			return launch{}, err
		}
	}
	l := launch{exe: launcher, env: env, initEnv: maps.Clone(env), report: &r}
	for _, v := range []struct {
		env           map[string]string
		cacheWritable bool
	}{{l.env, false}, {l.initEnv, true}} {
		spec, err := s.sandboxSpec(r, bin, sc, env, v.cacheWritable)
		if err != nil {
			return launch{}, err
		}
		spec.Env = launcherEnv
		name, value := spec.Variable()
		v.env[name] = value
		if v.cacheWritable && r.User != nil {
			// The binary and the provider mirrors are opened to it; the
			// operator's read_only paths must already be readable.
			l.user, l.writable, l.readable, l.checked = r.User, spec.ReadWrite, []string{spec.Program}, s.Sandbox.ReadOnly
			if mirrors, err := CLIConfigPaths(env["TF_CLI_CONFIG_FILE"]); err == nil {
				for _, d := range mirrors {
					if _, err := os.Stat(d); err == nil {
						l.readable = append(l.readable, d)
					}
				}
			}
		}
	}
	return l, nil
}

// launch is how a session runs its commands.
type launch struct {
	// exe is what terraform-exec runs: the binary, or the launcher.
	exe string
	// env is the commands' environment; initEnv init's, the only one
	// whose sandbox may write the plugin cache.
	env, initEnv map[string]string
	// report is what the sandbox does on this host (nil without one).
	report *sandbox.Report
	// user is who Terraform runs as when not the server's user, and the
	// paths to hand over to it before each command (handOver).
	user                        *sandbox.Credential
	writable, readable, checked []string
}

// handOver gives the run's files to the sandbox's user, if any.
func (l launch) handOver() error {
	if err := handOver(l.user, l.writable, l.readable, l.checked); err != nil {
		return fmt.Errorf("terraform: give the run's files to uid %d: %w", l.user.UID, err)
	}
	return nil
}

// sandboxSpec says what Terraform may touch. Read-write: the tree (modules
// of other directories are in it, and Terraform writes .terraform and
// lock files into the layer), the scratch dir, and for init the plugin
// cache. Read-only: the binary, the plugin cache (whose providers it
// executes) but for init, a CLI config file the operator passes
// (TF_CLI_CONFIG_FILE) with the provider mirrors it names, and the
// operator's paths.
func (s Setup) sandboxSpec(r sandbox.Report, bin string, sc scratch, env map[string]string, cacheWritable bool) (sandbox.Spec, error) {
	rw := []string{s.root(), string(sc)}
	if s.PluginCacheDir != "" {
		// Terraform refuses a cache dir that does not exist, and the
		// sandbox cannot open one that is not there yet.
		if err := os.MkdirAll(s.PluginCacheDir, 0o755); err != nil {
			return sandbox.Spec{}, fmt.Errorf("terraform: plugin cache: %w", err)
		}
	}
	var ro []string
	if s.PluginCacheDir != "" {
		if cacheWritable {
			rw = append(rw, s.PluginCacheDir)
		} else {
			ro = append(ro, s.PluginCacheDir)
		}
	}
	if f := env["TF_CLI_CONFIG_FILE"]; f != "" && filepath.IsAbs(f) {
		ro = append(ro, f)
		// The mirrors it installs providers from. One that does not exist
		// cannot be opened: Terraform finds no provider there and says so.
		dirs, err := CLIConfigPaths(f)
		if err != nil && !os.IsNotExist(err) {
			return sandbox.Spec{}, err
		}
		for _, d := range dirs {
			if _, err := os.Stat(d); err == nil {
				ro = append(ro, d)
			}
		}
	}
	off := r.Mode == sandbox.Off
	for _, list := range [][]string{s.Sandbox.ReadWrite, s.Sandbox.ReadOnly} {
		for _, p := range list {
			// Landlock can open only what exists: say which path is wrong
			// before the launcher fails on it.
			if _, err := os.Stat(p); err != nil && !off {
				return sandbox.Spec{}, fmt.Errorf("terraform: sandbox path: %w; create it, or remove it from the server config's terraform.sandbox_paths", err)
			}
		}
	}
	spec := r.Spec(bin, s.stopGrace())
	spec.ReadWrite = append(rw, s.Sandbox.ReadWrite...)
	spec.ReadOnly = append(ro, s.Sandbox.ReadOnly...)
	return spec, nil
}

func (s Setup) root() string {
	if s.Root == "" {
		return s.WorkDir
	}
	return s.Root
}

func (s Setup) stopGrace() time.Duration {
	if s.StopGrace <= 0 {
		return DefaultStopGrace
	}
	return s.StopGrace
}

// waitDelay is how long terraform-exec waits after its interrupt before it
// kills what it started: the grace itself without a sandbox; with one, the
// supervisor ends the run after the grace, and terraform-exec's kill is a
// backstop.
func (s Setup) waitDelay() time.Duration {
	if s.Sandbox == nil || s.Sandbox.Settings.Mode == sandbox.Off {
		return s.stopGrace()
	}
	return s.stopGrace() + stopBackstop
}

// copyCLIConfig copies the CLI config file that env names, if a regular
// file, into the scratch dir, and names the copy instead.
func copyCLIConfig(env map[string]string, sc scratch) error {
	f := env["TF_CLI_CONFIG_FILE"]
	if f == "" {
		return nil
	}
	if fi, err := os.Stat(f); err != nil || !fi.Mode().IsRegular() {
		return nil // Terraform says what is wrong with it
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return fmt.Errorf("terraform: CLI config: %w", err)
	}
	cp := sc.file("terraform.rc")
	if err := os.WriteFile(cp, b, 0o600); err != nil {
		return fmt.Errorf("terraform: CLI config: %w", err)
	}
	env["TF_CLI_CONFIG_FILE"] = cp
	return nil
}
