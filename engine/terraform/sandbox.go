package terraform

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"

	"strata.dev/strata/sandbox"
)

// Sandbox is how the server confines Terraform (package sandbox): its
// commands run through the launcher, which restricts them with Landlock to
// the run's tree, its scratch dir, the plugin cache, the Terraform binary,
// the system files a program needs, and the paths below.
type Sandbox struct {
	// Off runs Terraform unconfined (the server config's `sandbox: off`);
	// its environment is as clean as when confined.
	Off bool
	// ReadWrite and ReadOnly are paths the operator adds (a local
	// backend's state directory, a credentials file); each must exist.
	ReadWrite, ReadOnly []string
}

// command is the program terraform-exec runs and its environments: the
// Terraform binary itself without a sandbox, else the launcher, with the
// Spec that says what the binary may touch. initEnv is init's: the only
// command that may write the shared plugin cache. The others only read and
// execute it: a PR's plan runs its own code (an `external` data source, a
// provider it ships), which must not replace a cached provider that every
// other repository's runs then execute.
func command(s Setup, bin string, sc scratch) (exe string, env, initEnv map[string]string, err error) {
	env, launcherEnv, err := environment(s, sc)
	if err != nil {
		return "", nil, nil, err
	}
	if s.Sandbox == nil {
		return bin, env, env, nil
	}
	if err := sandbox.Detect(s.Sandbox.Off).Err(); err != nil {
		return "", nil, nil, err
	}
	// The launcher execs the binary from the layer's directory: the path
	// must not depend on PATH or the current directory.
	if bin, err = exec.LookPath(bin); err == nil {
		bin, err = filepath.Abs(bin)
	}
	if err != nil {
		return "", nil, nil, fmt.Errorf("terraform: binary: %w", err)
	}
	launcher, err := sandbox.Launcher()
	if err != nil {
		return "", nil, nil, fmt.Errorf("terraform: sandbox launcher: %w", err)
	}
	initEnv = maps.Clone(env)
	for _, v := range []struct {
		env           map[string]string
		cacheWritable bool
	}{{env, false}, {initEnv, true}} {
		spec, err := s.sandboxSpec(bin, sc, env, v.cacheWritable)
		if err != nil {
			return "", nil, nil, err
		}
		spec.Env = launcherEnv
		name, value := spec.Variable()
		v.env[name] = value
	}
	return launcher, env, initEnv, nil
}

// sandboxSpec says what Terraform may touch. Read-write: the tree (modules
// of other directories are in it, and Terraform writes .terraform and
// lock files into the layer), the scratch dir, and for init the plugin
// cache. Read-only: the binary, the plugin cache (whose providers it
// executes) but for init, a CLI config file the operator passes
// (TF_CLI_CONFIG_FILE) with the provider mirrors it names, and the
// operator's paths.
func (s Setup) sandboxSpec(bin string, sc scratch, env map[string]string, cacheWritable bool) (sandbox.Spec, error) {
	root := s.Root
	if root == "" {
		root = s.WorkDir
	}
	rw := []string{root, string(sc)}
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
	for _, list := range [][]string{s.Sandbox.ReadWrite, s.Sandbox.ReadOnly} {
		for _, p := range list {
			// Landlock can open only what exists: say which path is wrong
			// before the launcher fails on it.
			if _, err := os.Stat(p); err != nil && !s.Sandbox.Off {
				return sandbox.Spec{}, fmt.Errorf("terraform: sandbox path: %w; create it, or remove it from the server config's terraform.sandbox_paths", err)
			}
		}
	}
	return sandbox.Spec{
		Program:    bin,
		ReadWrite:  append(rw, s.Sandbox.ReadWrite...),
		ReadOnly:   append(ro, s.Sandbox.ReadOnly...),
		Unconfined: s.Sandbox.Off,
	}, nil
}
