package terraform

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/terraform-config-inspect/tfconfig"
)

// loadModule is tfconfig.LoadModule that never panics. The inspector
// panics on some files that Terraform itself refuses with a message (a
// required_providers block at the top level, outside terraform {}); a
// PR's files must not crash a job, nor layer discovery. Such a directory
// comes back without a module and with an error naming the file, as any
// file that does not parse.
//
// It is memoized by the content of dir's Terraform files (inspected): one
// run reads its layer several times (the binary for its required_version,
// the init key, the providers init installs, the sensitive variables), and
// each /plan of unchanged files again, while parsing a 2,000-resource file
// takes 50–80 ms here. The module returned is shared: callers only read it.
func loadModule(dir string) (*tfconfig.Module, tfconfig.Diagnostics) {
	key, ok := contentKey(dir)
	if !ok {
		return loadModuleOnce(dir)
	}
	if got, ok := inspected.get("module " + key); ok {
		m := got.(loadedModule)
		return m.mod, m.diags
	}
	mod, diags := loadModuleOnce(dir)
	inspected.put("module "+key, loadedModule{mod, diags})
	return mod, diags
}

type loadedModule struct {
	mod   *tfconfig.Module
	diags tfconfig.Diagnostics
}

func loadModuleOnce(dir string) (mod *tfconfig.Module, diags tfconfig.Diagnostics) {
	defer func() {
		if r := recover(); r != nil {
			mod, diags = nil, tfconfig.Diagnostics{{
				Severity: tfconfig.DiagError,
				Summary:  "Configuration not parseable",
				Detail:   fmt.Sprintf("%s: %v", panickingFile(dir), r),
			}}
		}
	}()
	return tfconfig.LoadModule(dir)
}

// panickingFile finds which file of dir the inspector panics on, by reading
// each alone; the directory itself when none does alone.
func panickingFile(dir string) string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return dir
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && (strings.HasSuffix(e.Name(), ".tf") || strings.HasSuffix(e.Name(), ".tf.json")) {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	for _, name := range names {
		if inspectPanics(filepath.Join(dir, name)) {
			return filepath.Join(dir, name)
		}
	}
	return dir
}

func inspectPanics(path string) (panicked bool) {
	defer func() { panicked = recover() != nil }()
	src, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	var file *hcl.File
	if strings.HasSuffix(path, ".json") {
		file, _ = hclparse.NewParser().ParseJSON(src, path)
	} else {
		file, _ = hclparse.NewParser().ParseHCL(src, path)
	}
	if file != nil {
		tfconfig.LoadModuleFromFile(file, tfconfig.NewModule(filepath.Dir(path)))
	}
	return false
}

// Unparseable says why the Terraform files in dir cannot be read, or ""
// when they can. A layer that does not parse is still a layer (its plan
// shows Terraform's own message); this lets a local check say so first.
func Unparseable(dir string) string {
	_, diags := loadModule(dir)
	if err := diags.Err(); err != nil {
		return err.Error()
	}
	return ""
}

// contentKey identifies the Terraform files of dir by their names and
// contents (and dir, which tfconfig records as the module's path); false
// when the directory cannot be read.
func contentKey(dir string) (string, bool) {
	files, ok := terraformFiles(dir)
	if !ok {
		return "", false
	}
	return filesKey(fmt.Sprintf("%q\n", dir), files), true
}

// filesKey hashes prefix, then each file's name, length and content.
func filesKey(prefix string, files []terraformFile) string {
	h := sha256.New()
	h.Write([]byte(prefix))
	for _, f := range files {
		fmt.Fprintf(h, "%q %d\n", f.name, len(f.src))
		h.Write(f.src)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// inspected holds the most recent inspections of layers' files.
var inspected = &memo{max: 64, entries: map[string]any{}}

// memo is a small map that forgets its oldest entries beyond max.
type memo struct {
	mu      sync.Mutex
	max     int
	order   []string
	entries map[string]any
}

func (m *memo) get(key string) (any, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.entries[key]
	return v, ok
}

func (m *memo) put(key string, v any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[key]; !ok {
		m.order = append(m.order, key)
	}
	m.entries[key] = v
	for len(m.order) > m.max {
		delete(m.entries, m.order[0])
		m.order = m.order[1:]
	}
}
