package terraform

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// LocalModules lists the local module directories the layer in dir calls,
// directly or through other local modules: sorted, repo-relative,
// slash-separated paths under root, without dir itself. Only `./` and `../`
// sources are local; a source that leaves the tree is ignored, a cycle is
// followed once, and a directory that does not parse still gives the calls
// that do, so a broken module does not hide the layers that call it.
func LocalModules(root, dir string) []string {
	dir = path.Clean(dir)
	seen := map[string]bool{dir: true}
	var out []string
	next := []string{dir}
	for len(next) > 0 {
		caller := next[0]
		next = next[1:]
		for _, source := range moduleSources(filepath.Join(root, filepath.FromSlash(caller))) {
			target, ok := localModuleDir(caller, source)
			if !ok || seen[target] || !insideTree(root, target) {
				continue
			}
			seen[target] = true
			out = append(out, target)
			next = append(next, target)
		}
	}
	sort.Strings(out)
	return out
}

// insideTree reports whether the repo-relative dir stays within root, by its
// path and, once its links are resolved, on disk. A directory missing from
// the tree (a module the PR deletes) stays in it: its callers are touched.
func insideTree(root, dir string) bool {
	if dir == ".." || strings.HasPrefix(dir, "../") || path.IsAbs(dir) {
		return false
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(filepath.Join(root, filepath.FromSlash(dir)))
	if errors.Is(err, fs.ErrNotExist) {
		return true
	}
	if err != nil {
		return false
	}
	rel, err := filepath.Rel(realRoot, real)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}
