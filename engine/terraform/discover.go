package terraform

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// Discover lists the layers of a repository that has no `.strata.yaml`: every
// directory under root holding Terraform files (`.tf`, `.tf.json`) that is not
// called as a local module (`./...` or `../...` source) by another directory.
// `.terraform` and hidden directories are skipped. The result holds sorted,
// repo-relative, slash-separated paths; the root itself is ".".
//
// Files that do not parse are not an error here: such a directory is still a
// layer, so that its plan reports Terraform's own message on the PR.
func Discover(root string) ([]string, error) {
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == ".terraform") {
			return filepath.SkipDir
		}
		has, err := hasTerraformFiles(p)
		if err != nil {
			return err
		}
		if has {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}

	called := map[string]bool{}
	for _, dir := range dirs {
		for _, source := range moduleSources(filepath.Join(root, filepath.FromSlash(dir))) {
			if target, ok := localModuleDir(dir, source); ok {
				called[target] = true
			}
		}
	}

	layers := []string{}
	for _, dir := range dirs {
		if !called[dir] {
			layers = append(layers, dir)
		}
	}
	sort.Strings(layers)
	return layers, nil
}

// localModuleDir resolves a module source relative to the calling directory,
// when it is a local path (Terraform only treats `./` and `../` as local).
func localModuleDir(callerDir, source string) (string, bool) {
	if !strings.HasPrefix(source, "./") && !strings.HasPrefix(source, "../") {
		return "", false
	}
	return path.Clean(path.Join(callerDir, source)), true
}

func hasTerraformFiles(dir string) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		name := e.Name()
		if !e.IsDir() && (strings.HasSuffix(name, ".tf") || strings.HasSuffix(name, ".tf.json")) {
			return true, nil
		}
	}
	return false, nil
}
