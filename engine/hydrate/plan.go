package hydrate

import (
	"bytes"
	"path"
	"sort"
	"strings"
)

// FileChange is one entry of the Git tree the caller builds on the
// destination branch: write Content at Path, or delete Path.
type FileChange struct {
	Path    string // repo-relative, under dest.path
	Content []byte // nil when Delete
	Delete  bool
}

// Plan compares what is under destPath in the destination tree (repo-relative
// paths to contents) with the hydrated files (relative to destPath) and lists
// the writes and deletions that make them equal, sorted by path. Files outside
// destPath are never touched; files under it that are not hydrated any more
// are deleted. changed is false when the commit can be skipped.
func Plan(destTree map[string][]byte, destPath string, files map[string][]byte) (changes []FileChange, changed bool) {
	prefix := strings.Trim(path.Clean("/"+destPath), "/")
	under := func(p string) (string, bool) {
		if prefix == "" {
			return p, true
		}
		rest, ok := strings.CutPrefix(p, prefix+"/")
		return rest, ok
	}
	full := func(name string) string {
		if prefix == "" {
			return name
		}
		return prefix + "/" + name
	}

	for _, name := range sortedKeys(files) {
		current, ok := destTree[full(name)]
		if ok && bytes.Equal(current, files[name]) {
			continue
		}
		changes = append(changes, FileChange{Path: full(name), Content: files[name]})
	}
	for _, p := range sortedKeys(destTree) {
		rel, ok := under(p)
		if !ok {
			continue
		}
		if _, keep := files[rel]; !keep {
			changes = append(changes, FileChange{Path: p, Delete: true})
		}
	}
	sort.Slice(changes, func(i, j int) bool { return changes[i].Path < changes[j].Path })
	return changes, len(changes) > 0
}
