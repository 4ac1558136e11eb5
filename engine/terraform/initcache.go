package terraform

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
)

// The init cache keeps what `terraform init` wrote into a layer (.terraform
// and the dependency lock file), keyed by everything init reads: the
// binary and its version, the variables and CLI config it gets, the
// backend block, and each module's providers and module calls. A second
// plan of a layer whose key did not change copies that back instead of
// running init again (the files and resources may have changed: init does
// not read them).
//
// It is kept per repository and layer directory (Setup.InitCacheScope), so
// no repository's init is ever used by another's. It is taken right after
// init, before plan runs any of the PR's code, and only from a tree that
// brought no .terraform of its own. A layer calling a module that is not
// local (a registry or git source, whose content may move under the same
// name) is not cached: init fetches it each time.

// initKey is the cache key of the layer's init, or "" when the layer is not
// cached.
func initKey(s Setup, bin, version string) string {
	if s.InitCacheDir == "" || s.InitCacheScope == "" || s.PluginCacheDir == "" {
		return ""
	}
	if _, err := os.Lstat(filepath.Join(s.WorkDir, ".terraform")); !errors.Is(err, fs.ErrNotExist) {
		return "" // the tree brought one: never cached, never replaced
	}
	h := sha256.New()
	fmt.Fprintf(h, "scope %q\nbinary %q %q %q\ncache %q\n", s.InitCacheScope, bin, s.Kind, version, s.PluginCacheDir)
	env := make([]string, 0, len(s.Env))
	for k, v := range s.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	for _, kv := range env {
		fmt.Fprintf(h, "env %q\n", kv)
	}
	for _, f := range []string{s.CLIConfigFile, s.Env["TF_CLI_CONFIG_FILE"]} {
		if f == "" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			return ""
		}
		fmt.Fprintf(h, "cli config %q %q\n", f, b)
	}
	lock, err := os.ReadFile(filepath.Join(s.WorkDir, lockFileName))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return ""
	}
	fmt.Fprintf(h, "lock file %q\n", lock)
	root := s.Root
	if root == "" {
		root = s.WorkDir
	}
	rel, err := filepath.Rel(root, s.WorkDir)
	if err != nil {
		return ""
	}
	dirs := append([]string{filepath.ToSlash(rel)}, LocalModules(root, filepath.ToSlash(rel))...)
	for _, dir := range dirs {
		if !initInputs(h, root, dir) {
			return ""
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

const lockFileName = ".terraform.lock.hcl"

// initInputs writes what init reads of the module in dir to w: its
// required providers and version, the providers its configurations and
// resources imply, its module calls, its backend, and its JSON files
// whole. False means the module cannot be cached.
func initInputs(w io.Writer, root, dir string) bool {
	path := filepath.Join(root, filepath.FromSlash(dir))
	mod, diags := loadModule(path)
	if diags.HasErrors() {
		return false
	}
	fmt.Fprintf(w, "module %q\ncore %q\n", dir, mod.RequiredCore)
	for _, name := range sortedKeys(mod.RequiredProviders) {
		p := mod.RequiredProviders[name]
		fmt.Fprintf(w, "requires %q %q %q %v\n", name, p.Source, p.VersionConstraints, p.ConfigurationAliases)
	}
	for _, name := range sortedKeys(mod.ProviderConfigs) {
		fmt.Fprintf(w, "provider %q %q\n", name, mod.ProviderConfigs[name].Alias)
	}
	implied := map[string]bool{}
	for _, rs := range []map[string]*tfconfig.Resource{mod.ManagedResources, mod.DataResources} {
		for _, r := range rs {
			implied[r.Provider.Name+" "+r.Provider.Alias] = true
		}
	}
	for _, p := range sortedKeys(implied) {
		fmt.Fprintf(w, "uses %q\n", p)
	}
	for _, name := range sortedKeys(mod.ModuleCalls) {
		c := mod.ModuleCalls[name]
		if _, ok := localModuleDir(dir, c.Source); !ok {
			return false
		}
		fmt.Fprintf(w, "calls %q %q %q\n", name, c.Source, c.Version)
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return false
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".tf.json"):
			b, err := os.ReadFile(filepath.Join(path, name))
			if err != nil {
				return false
			}
			fmt.Fprintf(w, "json %q %q\n", name, b)
		case strings.HasSuffix(name, ".tf"):
			blocks, ok := backendBlocks(filepath.Join(path, name))
			if !ok {
				return false
			}
			for _, b := range blocks {
				fmt.Fprintf(w, "backend %q %q\n", name, b)
			}
		}
	}
	return true
}

// backendBlocks are the source of the backend and cloud blocks of the
// terraform blocks of a file: init configures the backend from them. A
// file that does not name either has none, without parsing it; the others
// are memoized by their content, like loadModule.
func backendBlocks(file string) ([][]byte, bool) {
	src, err := os.ReadFile(file)
	if err != nil {
		return nil, false
	}
	if !bytes.Contains(src, []byte("backend")) && !bytes.Contains(src, []byte("cloud")) {
		return nil, true
	}
	sum := sha256.Sum256(src)
	key := "backends " + hex.EncodeToString(sum[:])
	if got, ok := inspected.get(key); ok {
		b := got.(parsedBackends)
		return b.blocks, b.ok
	}
	blocks, ok := parseBackendBlocks(file, src)
	inspected.put(key, parsedBackends{blocks, ok})
	return blocks, ok
}

type parsedBackends struct {
	blocks [][]byte
	ok     bool
}

func parseBackendBlocks(file string, src []byte) ([][]byte, bool) {
	f, diags := hclsyntax.ParseConfig(src, file, hcl.InitialPos)
	if diags.HasErrors() {
		return nil, false
	}
	body, ok := f.Body.(*hclsyntax.Body)
	if !ok {
		return nil, false
	}
	var out [][]byte
	for _, b := range body.Blocks {
		if b.Type != "terraform" {
			continue
		}
		for _, inner := range b.Body.Blocks {
			if inner.Type == "backend" || inner.Type == "cloud" {
				r := inner.Range()
				out = append(out, src[r.Start.Byte:r.End.Byte])
			}
		}
	}
	return out, true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// restoreInit copies a cached init into the layer, reporting whether there
// was one.
func restoreInit(s Setup, key string) (bool, error) {
	cached := filepath.Join(s.InitCacheDir, key)
	if _, err := os.Stat(cached); errors.Is(err, fs.ErrNotExist) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	dot := filepath.Join(s.WorkDir, ".terraform")
	err := os.CopyFS(dot, os.DirFS(filepath.Join(cached, "dot-terraform")))
	if err == nil {
		err = restoreLockFile(s.WorkDir, cached)
	}
	if err != nil {
		// init starts from a clean layer.
		os.RemoveAll(dot)
		return false, fmt.Errorf("terraform: restore init: %w", err)
	}
	return true, nil
}

// restoreLockFile copies the cached dependency lock file into a layer that
// has none; a layer's own is in the key.
func restoreLockFile(workDir, cached string) error {
	lock, err := os.ReadFile(filepath.Join(cached, lockFileName))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	} else if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(workDir, lockFileName)); err == nil {
		return nil
	}
	return os.WriteFile(filepath.Join(workDir, lockFileName), lock, 0o644)
}

// saveInit keeps what init wrote into the layer under key. Another run
// saving the same key at once is harmless: each builds its copy aside and
// renames it into place; the first rename wins.
func saveInit(s Setup, key string) error {
	if err := os.MkdirAll(s.InitCacheDir, 0o700); err != nil {
		return err
	}
	tmp := filepath.Join(s.InitCacheDir, key+".tmp-"+rand.Text())
	defer os.RemoveAll(tmp)
	if err := os.CopyFS(filepath.Join(tmp, "dot-terraform"), os.DirFS(filepath.Join(s.WorkDir, ".terraform"))); err != nil {
		return err
	}
	lock, err := os.ReadFile(filepath.Join(s.WorkDir, lockFileName))
	if err == nil {
		err = os.WriteFile(filepath.Join(tmp, lockFileName), lock, 0o644)
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	target := filepath.Join(s.InitCacheDir, key)
	if err := os.Rename(tmp, target); err != nil {
		if _, serr := os.Stat(target); serr == nil {
			return nil // another run saved it first
		}
		return err
	}
	return nil
}
