package hydrate

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/types"
)

// ErrRemote is a remote reference that the server does not allow.
var ErrRemote = errors.New("remote references are not fetched during hydration")

// errHelmCharts refuses kustomize's Helm chart inflation, which downloads
// charts and runs the helm binary.
var errHelmCharts = errors.New("chart inflation is off: kustomize would download and render Helm charts during the build")

// What a kustomization's entry names decides what is checked in it.
type entryKind int

const (
	fileEntry   entryKind = iota // a file kustomize loads: a patch, a generator's file
	baseEntry                    // a file of resources, or a directory: a base or component
	pluginEntry                  // generators, transformers, validators: plugin configs
)

// checkDir checks the kustomization files in dir, and through them every
// kustomization they build on, before kustomize reads them: every remote
// reference must be allowed, every local one must stay in the tree, and
// nothing may inflate Helm charts. When plugins is set, the resources
// there are plugin configs (the directory is a generator, transformer or
// validator) and are checked as such. Files that do not parse are left to
// kustomize, which reports them.
func (t *treeFS) checkDir(dir string, plugins bool) error {
	key := dir
	if plugins {
		key += "\x00plugins"
	}
	t.mu.Lock()
	done := t.checked[key]
	t.checked[key] = true
	t.mu.Unlock()
	if done {
		return nil
	}
	var kids []shape
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		file := filepath.Join(dir, name)
		data, err := t.peek(file)
		if err != nil {
			continue
		}
		var k types.Kustomization
		if k.Unmarshal(data) != nil {
			continue
		}
		k.FixKustomization()
		c, err := t.checkKustomization(t.name(file), dir, &k, plugins)
		if err != nil {
			return err
		}
		kids = append(kids, c.kids...)
		// Before the build: a diamond of bases costs this walk one visit
		// per directory, and kustomize one build per path through it.
		if err := t.limits.exceeds(t.name(file), withKids(kids)); err != nil {
			return err
		}
	}
	t.mu.Lock()
	t.shapes[key] = withKids(kids)
	t.mu.Unlock()
	return nil
}

// shapeOf is the shape checkDir found for the kustomization in dir; a
// directory still being checked (a cycle, which kustomize refuses) counts
// for nothing.
func (t *treeFS) shapeOf(dir string, plugins bool) (shape, bool) {
	key := dir
	if plugins {
		key += "\x00plugins"
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.shapes[key]
	return s, ok
}

// peek reads a file of the tree (or an allowed clone) without recording
// it as an input: only what kustomize reads is one.
func (t *treeFS) peek(p string) ([]byte, error) {
	real, err := t.resolve(p)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(real)
}

func (t *treeFS) checkKustomization(file, dir string, k *types.Kustomization, plugins bool) (*entryChecker, error) {
	if len(k.HelmCharts) > 0 || k.HelmGlobals != nil {
		return nil, fmt.Errorf("%s: helmCharts: %w; commit the rendered manifests, or test the chart as a release (releases: in .strata.yaml)", file, errHelmCharts)
	}
	c := entryChecker{t: t, file: file, dir: dir}
	bases := baseEntry
	if plugins {
		bases = pluginEntry
	}
	c.all("resources", bases, k.Resources...)
	c.all("components", bases, k.Components...)
	c.all("crds", fileEntry, k.Crds...)
	c.all("configurations", fileEntry, k.Configurations...)
	c.all("openapi", fileEntry, k.OpenAPI["path"])
	for _, p := range append(k.Patches, k.PatchesJson6902...) {
		c.all("patches", fileEntry, p.Path)
	}
	for _, p := range k.PatchesStrategicMerge {
		if !strings.Contains(string(p), "\n") { // else an inline patch
			c.all("patchesStrategicMerge", fileEntry, string(p))
		}
	}
	for _, r := range k.Replacements {
		c.all("replacements", fileEntry, r.Path)
	}
	for _, g := range k.ConfigMapGenerator {
		c.generatorArgs("configMapGenerator", g.GeneratorArgs)
	}
	for _, g := range k.SecretGenerator {
		c.generatorArgs("secretGenerator", g.GeneratorArgs)
	}
	for field, entries := range map[string][]string{"generators": k.Generators, "transformers": k.Transformers, "validators": k.Validators} {
		for _, e := range entries {
			if isInlineConfig(e) {
				c.pluginConfigs(field, []byte(e))
			} else {
				c.all(field, pluginEntry, e)
			}
		}
	}
	return &c, c.err
}

// entryChecker checks the entries of one kustomization file; the first
// refusal sticks. kids are the shapes of the kustomizations it includes.
type entryChecker struct {
	t    *treeFS
	file string // as errors name it
	dir  string
	err  error
	kids []shape
}

func (c *entryChecker) all(field string, kind entryKind, refs ...string) {
	for _, ref := range refs {
		if c.err == nil && ref != "" {
			c.err = c.entry(field, kind, ref)
		}
	}
}

func (c *entryChecker) generatorArgs(field string, g types.GeneratorArgs) {
	for _, f := range g.FileSources {
		c.all(field+" files", fileEntry, f)
		if _, p, ok := strings.Cut(f, "="); ok { // files: [key=path]
			c.all(field+" files", fileEntry, p)
		}
	}
	c.all(field+" envs", fileEntry, g.EnvSources...)
}

func (c *entryChecker) entry(field string, kind entryKind, ref string) error {
	if isRemote(ref) {
		if kind == pluginEntry {
			return c.refuse(field, ref, ErrRemote, "plugin configuration (generators, transformers, validators) must be in the repository")
		}
		if !c.t.allow.covers(ref) {
			return c.refuse(field, ref, ErrRemote, "vendor it into the repository, or ask the operator to allow it in the server config (hydrate.allow_remote)")
		}
		return nil
	}
	const stay = "name a file of the repository, relative to the kustomization"
	if filepath.IsAbs(ref) {
		return c.refuse(field, ref, ErrOutsideRoot, stay)
	}
	abs := filepath.Join(c.dir, ref)
	real, err := c.t.resolve(abs)
	if errors.Is(err, ErrOutsideRoot) || (err == nil && !c.sameArea(real)) {
		return c.refuse(field, ref, ErrOutsideRoot, stay+" (no .. above its root, no symlink out of it)")
	}
	info, statErr := os.Stat(real)
	if err != nil || statErr != nil {
		return nil // missing: kustomize says so
	}
	switch {
	case info.IsDir() && kind != fileEntry:
		if err := c.t.checkDir(real, kind == pluginEntry); err != nil {
			return err
		}
		if s, ok := c.t.shapeOf(real, kind == pluginEntry); ok {
			c.kids = append(c.kids, s)
		}
		return nil
	case !info.IsDir() && kind == pluginEntry:
		data, err := c.t.peek(real)
		if err == nil {
			c.pluginConfigs(field, data)
		}
		return c.err
	}
	return nil
}

// sameArea keeps a kustomization of the tree from reaching into a clone and
// a clone's from reaching into the tree or another clone.
func (c *entryChecker) sameArea(real string) bool {
	if c.t.inside(c.dir) {
		return c.t.inside(real)
	}
	clone, ok := c.t.cloneOf(c.dir)
	return ok && within(clone, real)
}

func (c *entryChecker) refuse(field, ref string, err error, what string) error {
	return fmt.Errorf("%s: %s: %q: %w: %s", c.file, field, ref, err, what)
}

// pluginPathKeys are the fields of kustomize's builtin plugin configs that
// name files to load (ConfigMapGenerator files and envs, PatchTransformer
// path, ReplacementTransformer replacements[].path, ...).
var pluginPathKeys = map[string]bool{
	"files": true, "envs": true, "env": true, "path": true, "paths": true, "targetFilePath": true,
	"valuesFile": true, "additionalValuesFiles": true, "chartHome": true, "repo": true,
}

// pluginConfigs checks the files that plugin configs (YAML documents,
// inline or from a file) name. Their relative paths are the loading
// kustomization's, so only remote and absolute ones are refused here; the
// file system refuses the rest when kustomize reads them.
func (c *entryChecker) pluginConfigs(field string, data []byte) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for c.err == nil {
		var doc yaml.Node
		if dec.Decode(&doc) != nil {
			return // the end, or what kustomize reports as not parsing
		}
		c.walkConfig(field, &doc)
	}
}

func (c *entryChecker) walkConfig(field string, n *yaml.Node) {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := n.Content[i], n.Content[i+1]
			if pluginPathKeys[key.Value] {
				for _, ref := range scalars(value) {
					c.configPath(field+" "+key.Value, ref)
					if _, p, ok := strings.Cut(ref, "="); ok && key.Value == "files" { // files: [key=path]
						c.configPath(field+" "+key.Value, p)
					}
				}
			}
		}
	}
	for _, child := range n.Content {
		c.walkConfig(field, child)
	}
}

func (c *entryChecker) configPath(field, ref string) {
	switch {
	case c.err != nil:
	case isRemote(ref):
		c.err = c.entry(field, fileEntry, ref)
	case filepath.IsAbs(ref):
		c.err = c.refuse(field, ref, ErrOutsideRoot, "name a file of the repository, relative to the kustomization")
	}
}

// scalars are the one-line strings of a scalar or a sequence of them;
// multi-line ones are inline content, not paths.
func scalars(n *yaml.Node) []string {
	var out []string
	switch n.Kind {
	case yaml.ScalarNode:
		if !strings.Contains(n.Value, "\n") {
			out = append(out, n.Value)
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			out = append(out, scalars(item)...)
		}
	}
	return out
}

// isInlineConfig mirrors kustomize: an entry of generators, transformers
// or validators that parses as YAML objects is a config, not a path.
func isInlineConfig(entry string) bool {
	var doc yaml.Node
	if yaml.Unmarshal([]byte(entry), &doc) != nil || len(doc.Content) == 0 {
		return false
	}
	return doc.Content[0].Kind == yaml.MappingNode
}
