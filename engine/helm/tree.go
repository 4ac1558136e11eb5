package helm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/ignore"
	"sigs.k8s.io/yaml"
)

// ErrOutsideTree is a chart, chart file or values file that lies outside
// the fetched tree, by its path or through a symlink.
var ErrOutsideTree = errors.New("leaves the repository tree")

// maxDepth bounds the chart's directory nesting, so a symlink loop inside
// the tree ends.
const maxDepth = 64

// tree is the fetched tree, read only through an os.Root: no absolute path,
// no .. above it and no symlink out of it can be opened, whatever the chart
// or the values list. Helm's own loader follows symlinks anywhere.
type tree struct {
	root *os.Root
	dir  string // absolute, symlinks resolved
}

func openTree(dir string) (*tree, error) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("repository tree: %w", err)
	}
	root, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("repository tree: %w", err)
	}
	return &tree{root: root, dir: real}, nil
}

func (t *tree) Close() error { return t.root.Close() }

// load reads the chart and merges the values files of in, from its tree.
func load(in Input) (*chart.Chart, map[string]any, error) {
	t, err := openTree(in.Root)
	if err != nil {
		return nil, nil, err
	}
	defer t.Close()
	chartRel, err := t.rel(in.Root, in.ChartDir)
	if err != nil {
		return nil, nil, err
	}
	var valuesRels []string
	for _, f := range in.ValuesFiles {
		rel, err := t.rel(in.Root, f)
		if err != nil {
			return nil, nil, err
		}
		valuesRels = append(valuesRels, rel)
	}
	ch, err := t.loadChart(chartRel)
	if err != nil {
		return nil, nil, err
	}
	vals, err := t.mergeValues(valuesRels)
	if err != nil {
		return nil, nil, err
	}
	return ch, vals, nil
}

// rel turns an absolute path of Input into a path in the tree, refusing
// one that is not in it.
func (t *tree) rel(root, p string) (string, error) {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return "", fmt.Errorf("%s: %w: charts and values files must be in the repository", p, ErrOutsideTree)
	}
	if !filepath.IsLocal(rel) {
		return "", fmt.Errorf("%s: %w: charts and values files must be in the repository", filepath.ToSlash(rel), ErrOutsideTree)
	}
	return filepath.ToSlash(rel), nil
}

// explain names the path of a failed read in the user's words: a symlink
// out of the tree says so; anything else is the error as it is.
func (t *tree) explain(rel string, err error) error {
	if real, evalErr := filepath.EvalSymlinks(filepath.Join(t.dir, filepath.FromSlash(rel))); evalErr == nil &&
		real != t.dir && !strings.HasPrefix(real, t.dir+string(filepath.Separator)) {
		return fmt.Errorf("%s: %w through a symlink: charts and values files must be in the repository", rel, ErrOutsideTree)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s is not in the repository at this commit", rel)
	}
	return fmt.Errorf("%s: %w", rel, err)
}

// loadChart loads the chart at rel (a directory, or a packaged .tgz) with
// the dependencies vendored in its charts/. A dependency that Chart.yaml
// names but charts/ lacks is an error: Strata never downloads dependencies
// (no `helm dependency build`, whatever their repository: https://,
// oci:// or file://).
func (t *tree) loadChart(rel string) (*chart.Chart, error) {
	info, err := t.root.Stat(rel)
	if err != nil {
		return nil, fmt.Errorf("loading chart: %w", t.explain(rel, err))
	}
	var ch *chart.Chart
	if info.IsDir() {
		files, err := t.chartFiles(rel, newBudget())
		if err != nil {
			return nil, fmt.Errorf("loading chart %s: %w", rel, err)
		}
		ch, err = loader.LoadFiles(files)
		if err != nil {
			return nil, fmt.Errorf("loading chart %s: %w", rel, err)
		}
	} else {
		f, err := t.root.Open(rel)
		if err != nil {
			return nil, fmt.Errorf("loading chart: %w", t.explain(rel, err))
		}
		defer f.Close()
		if err := newBudget().measure(rel, f, 0); err != nil {
			return nil, fmt.Errorf("loading chart %s: %w", rel, err)
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("loading chart %s: %w", rel, err)
		}
		if ch, err = loader.LoadArchive(f); err != nil {
			return nil, fmt.Errorf("loading chart %s: %w", rel, err)
		}
	}
	if deps := ch.Metadata.Dependencies; len(deps) > 0 {
		if err := action.CheckDependencies(ch, deps); err != nil {
			return nil, fmt.Errorf("chart %s: %w (vendor them into charts/ with `helm dependency build` and commit them)", ch.Name(), err)
		}
	}
	if err := checkSchemas(ch); err != nil {
		return nil, fmt.Errorf("chart %s: %w", rel, err)
	}
	return ch, nil
}

// chartFiles reads the chart directory as Helm's loader.LoadDir does
// (.helmignore, the size limit, no irregular files, symlinks followed),
// but through the tree's root and within b, the archives of its
// dependencies unpacked included.
func (t *tree) chartFiles(dir string, b *budget) ([]*loader.BufferedFile, error) {
	rules := ignore.Empty()
	if data, err := t.root.ReadFile(path.Join(dir, ignore.HelmIgnore)); err == nil {
		if rules, err = ignore.Parse(bytes.NewReader(data)); err != nil {
			return nil, fmt.Errorf("%s: %w", ignore.HelmIgnore, err)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, t.explain(path.Join(dir, ignore.HelmIgnore), err)
	}
	rules.AddDefaults()

	var files []*loader.BufferedFile
	var walk func(name string, depth int) error
	walk = func(name string, depth int) error {
		if depth > maxDepth {
			return fmt.Errorf("%s: directories nested deeper than %d (a symlink loop?)", path.Join(dir, name), maxDepth)
		}
		entries, err := t.readDir(path.Join(dir, name))
		if err != nil {
			return err
		}
		for _, entry := range entries {
			n := path.Join(name, entry)
			full := path.Join(dir, n)
			fi, err := t.root.Stat(full) // follows a symlink only within the tree
			if err != nil {
				return t.explain(full, err)
			}
			if rules.Ignore(n, fi) {
				continue
			}
			if fi.IsDir() {
				if err := walk(n, depth+1); err != nil {
					return err
				}
				continue
			}
			if !fi.Mode().IsRegular() {
				return fmt.Errorf("cannot load irregular file %s as it has file mode type bits set", full)
			}
			if fi.Size() > loader.MaxDecompressedFileSize {
				return fmt.Errorf("chart file %q is larger than the maximum file size %d", full, loader.MaxDecompressedFileSize)
			}
			if err := b.take(full, fi.Size()); err != nil {
				return err
			}
			data, err := t.root.ReadFile(full)
			if err != nil {
				return t.explain(full, err)
			}
			if subchartArchive(n, data) {
				if err := b.measure(full, bytes.NewReader(data), 1); err != nil {
					return err
				}
			}
			files = append(files, &loader.BufferedFile{Name: n, Data: bytes.TrimPrefix(data, []byte{0xEF, 0xBB, 0xBF})})
		}
		return nil
	}
	return files, walk("", 0)
}

func (t *tree) readDir(dir string) ([]string, error) {
	f, err := t.root.Open(dir)
	if err != nil {
		return nil, t.explain(dir, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		return nil, t.explain(dir, err)
	}
	sort.Strings(names)
	return names, nil
}

// mergeValues merges the values files the way `helm -f a -f b` does, each
// read through the tree's root: never a URL, stdin or a file outside it.
func (t *tree) mergeValues(rels []string) (map[string]any, error) {
	base := map[string]any{}
	for _, rel := range rels {
		data, err := t.root.ReadFile(rel)
		if err != nil {
			return nil, fmt.Errorf("values file: %w", t.explain(rel, err))
		}
		cur := map[string]any{}
		if err := yaml.Unmarshal(data, &cur); err != nil {
			return nil, fmt.Errorf("values file %s: %w", rel, err)
		}
		base = mergeMaps(base, cur)
	}
	return base, nil
}

// mergeMaps is Helm's (pkg/cli/values): b wins, maps merge deeply.
func mergeMaps(a, b map[string]any) map[string]any {
	out := make(map[string]any, len(a))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if v, ok := v.(map[string]any); ok {
			if bv, ok := out[k].(map[string]any); ok {
				out[k] = mergeMaps(bv, v)
				continue
			}
		}
		out[k] = v
	}
	return out
}
