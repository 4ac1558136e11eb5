package hydrate

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strings"
)

// kustomize clones a remote base with the git binary into a new directory
// TMPDIR/kustomize-NNN, then reads it through the file system it was given.
// krusty has no option to clone elsewhere or to hand over the directory, so
// treeFS recognises a clone by that place and by its origin, which must be
// a repository the server allows. A clone of another build could match too
// (its name is random); it holds only an allowed repository's content.
const clonePrefix = "kustomize-"

// cloneOf returns the clone directory abs lies in, when abs is in one of
// kustomize's clone directories and the clone's origin is allowed.
func (t *treeFS) cloneOf(abs string) (string, bool) {
	if t.tmp == "" || !within(t.tmp, abs) || abs == t.tmp {
		return "", false
	}
	rel, err := filepath.Rel(t.tmp, abs)
	if err != nil {
		return "", false
	}
	first, _, _ := strings.Cut(rel, string(filepath.Separator))
	if !strings.HasPrefix(first, clonePrefix) {
		return "", false
	}
	dir := filepath.Join(t.tmp, first)
	t.mu.Lock()
	_, known := t.clones[dir]
	t.mu.Unlock()
	if known {
		return dir, true
	}
	origin := cloneOrigin(dir)
	if origin == "" || !t.allow.coversRepo(origin) {
		return "", false
	}
	t.mu.Lock()
	t.clones[dir] = origin
	t.mu.Unlock()
	return dir, true
}

// cloneOrigin reads the URL of the remote "origin" that kustomize's cloner
// added to the clone's .git/config; "" when there is none.
func cloneOrigin(dir string) string {
	data, err := os.ReadFile(filepath.Join(dir, ".git", "config"))
	if err != nil {
		return ""
	}
	inOrigin := false
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			inOrigin = line == `[remote "origin"]`
			continue
		}
		if key, value, ok := strings.Cut(line, "="); ok && inOrigin && strings.TrimSpace(key) == "url" {
			return strings.TrimSpace(value)
		}
	}
	return ""
}

// name is how errors show a path: repo-relative in the tree, the origin
// and the path in it in a clone, else the machine's path.
func (t *treeFS) name(abs string) string {
	if t.inside(abs) {
		return t.rel(abs)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for dir, origin := range t.clones {
		if within(dir, abs) {
			rel, _ := filepath.Rel(dir, abs)
			return origin + "//" + filepath.ToSlash(rel)
		}
	}
	return abs
}

// removeClone lets kustomize delete the clones it made once the build is
// done; everything else is read-only.
func (t *treeFS) removeClone(p string) error {
	t.mu.Lock()
	_, ok := t.clones[filepath.Clean(p)]
	t.mu.Unlock()
	if !ok {
		return errReadOnly
	}
	return os.RemoveAll(p)
}
