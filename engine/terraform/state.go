package terraform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// HTTPState is the http backend a layer's state is kept in (Strata's
// managed state, docs/state.md). Its addresses and credential reach
// Terraform in its environment only (TF_HTTP_*): the override file
// written into the run's copy of the layer is a constant
// `terraform { backend "http" {} }`, so no file, init cache or plan file
// holds them, and the init cache's key stays the same from run to run.
type HTTPState struct {
	Address  string // GET/POST, and LOCK/UNLOCK
	Username string
	Password string
}

// StateOverrideFile is the file Strata writes into the run's copy of a
// layer to use its http backend. A file of that name the PR ships is
// replaced (it is ours: a run's copy is private).
const StateOverrideFile = "strata_state_override.tf"

const stateOverride = "# Written by Strata into this run's copy of the layer: the state is Strata's (docs/state.md).\n" +
	"terraform {\n  backend \"http\" {}\n}\n"

// secrets are what of the backend a run's output must never show: the
// credential, which a PR's plan-time code or provisioner can print (into an
// output, say) as it can print any variable of its environment. They join
// the results' Sensitive, which the log, the check and the comment mask.
func (h *HTTPState) secrets() []string {
	if h == nil || h.Password == "" {
		return nil
	}
	return []string{h.Password}
}

// env adds the backend's variables to a command's environment.
func (h *HTTPState) env(env map[string]string) {
	env["TF_HTTP_ADDRESS"] = h.Address
	env["TF_HTTP_LOCK_ADDRESS"] = h.Address
	env["TF_HTTP_UNLOCK_ADDRESS"] = h.Address
	env["TF_HTTP_USERNAME"] = h.Username
	env["TF_HTTP_PASSWORD"] = h.Password
}

// writeStateOverride puts the override file into the layer, replacing a
// file or link of that name (never writing through a link).
func writeStateOverride(workDir string) error {
	path := filepath.Join(workDir, StateOverrideFile)
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("terraform: replace %s: %w", StateOverrideFile, err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("terraform: write %s: %w", StateOverrideFile, err)
	}
	_, err = f.WriteString(stateOverride)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// DeclaresBackend reports whether the layer in dir declares where its
// state is: a backend or cloud block in a terraform block of any of its
// .tf files (override files included). A file that does not parse is an
// error: Terraform would refuse it too.
func DeclaresBackend(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || name == StateOverrideFile || !strings.HasSuffix(name, ".tf") {
			continue
		}
		blocks, ok := backendBlocks(filepath.Join(dir, name))
		if !ok {
			return false, fmt.Errorf("%s does not parse", name)
		}
		if len(blocks) > 0 {
			return true, nil
		}
	}
	return false, jsonBackend(dir)
}

// jsonBackend refuses a layer whose .tf.json files may declare a backend:
// they are not parsed here, so the layer must say `state: own` or move
// its backend into a .tf file.
func jsonBackend(dir string) error {
	matches, _ := filepath.Glob(filepath.Join(dir, "*.tf.json"))
	for _, m := range matches {
		b, err := os.ReadFile(m)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), `"backend"`) || strings.Contains(string(b), `"cloud"`) {
			return fmt.Errorf("%s may declare a backend, which Strata does not read in JSON files: set `state: own` in .strata.yaml to keep it", filepath.Base(m))
		}
	}
	return nil
}

// useState writes the override file of a managed state before init reads
// the layer (and before the init cache's key is taken: a layer that
// switches to managed state runs init again), and says so in the log.
func (s *session) useState() error {
	if s.setup.State == nil {
		return nil
	}
	if err := writeStateOverride(s.setup.WorkDir); err != nil {
		return err
	}
	fmt.Fprintf(s.log, "[strata] state: kept by Strata (http backend, %s in the run's copy of the layer)\n", StateOverrideFile)
	return nil
}
