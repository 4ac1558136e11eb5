package hydrate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// ErrOutsideRoot is returned when a path, or the target of a symlink on it,
// leaves the repository tree.
var ErrOutsideRoot = errors.New("path leaves the repository tree")

// errReadOnly refuses writes: a build only reads the source tree.
var errReadOnly = errors.New("the source tree is read-only during a build")

// treeFS is the file system kustomize is given: the on-disk tree under root,
// nothing outside it (symlinks are resolved before the check), read-only.
// It records every file kustomize read or looked for and every directory it
// listed, so the next push can tell whether this sync's inputs changed.
//
// The one way out of root is a git clone that kustomize made of a remote
// base the server allows (see clone.go): its directory is readable, and
// each of its kustomizations is checked like the tree's before kustomize
// reads it.
type treeFS struct {
	disk   filesys.FileSystem
	root   string // absolute, symlinks resolved
	allow  allowList
	limits Limits
	tmp    string // kustomize's clone parent, symlinks resolved; "" when nothing is allowed

	mu      sync.Mutex
	files   map[string]bool
	dirs    map[string]bool
	clones  map[string]string // clone dir -> origin URL
	checked map[string]bool   // kustomization dirs already checked (checkDir)
	shapes  map[string]shape  // what building each checked one costs
	builds  int               // kustomization files kustomize read
	read    int64             // bytes kustomize read
}

func newTreeFS(root string, allow []string, limits Limits) (*treeFS, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	t := &treeFS{
		disk:    filesys.MakeFsOnDisk(),
		root:    real,
		allow:   allow,
		limits:  limits.orDefault(),
		files:   map[string]bool{},
		dirs:    map[string]bool{},
		clones:  map[string]string{},
		checked: map[string]bool{},
		shapes:  map[string]shape{},
	}
	if len(allow) > 0 {
		if t.tmp, err = filepath.EvalSymlinks(os.TempDir()); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// resolve returns the absolute, symlink-free form of p, refusing any path
// that leaves the root (or the allowed clone it lies in). A path that does
// not exist (yet) is resolved as far as it exists, so a symlinked parent
// directory cannot smuggle it out.
func (t *treeFS) resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	area := t.root
	if !within(t.root, abs) {
		clone, ok := t.cloneOf(abs)
		if !ok {
			return "", fmt.Errorf("%s: %w", p, ErrOutsideRoot)
		}
		area = clone
	}
	real, err := evalExisting(abs)
	if err != nil {
		return "", err
	}
	if !within(area, real) {
		// Name the link as the repository has it, not the machine's path.
		return "", fmt.Errorf("%s: %w", t.name(abs), ErrOutsideRoot)
	}
	return real, nil
}

func evalExisting(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	parent := filepath.Dir(p)
	if parent == p {
		return p, nil
	}
	realParent, err := evalExisting(parent)
	if err != nil {
		return "", err
	}
	return filepath.Join(realParent, filepath.Base(p)), nil
}

func within(dir, abs string) bool {
	return abs == dir || strings.HasPrefix(abs, dir+string(filepath.Separator))
}

func (t *treeFS) inside(abs string) bool { return within(t.root, abs) }

func (t *treeFS) rel(abs string) string {
	r, err := filepath.Rel(t.root, abs)
	if err != nil {
		return filepath.ToSlash(abs)
	}
	return filepath.ToSlash(r)
}

// recordFile notes a file read or probed under both the name asked for and
// the file it resolves to, since either may change in the next commit.
func (t *treeFS) recordFile(asked, real string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if abs, err := filepath.Abs(asked); err == nil && t.inside(abs) {
		t.files[t.rel(abs)] = true
	}
	if t.inside(real) {
		t.files[t.rel(real)] = true
	}
}

// recordDir notes a listed directory of the tree; a clone's are no input of
// the repository.
func (t *treeFS) recordDir(real string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.inside(real) {
		t.dirs[t.rel(real)] = true
	}
}

// inputs lists the recorded files, then the listed directories with a
// trailing slash, as one sorted slice of repo-relative paths.
func (t *treeFS) inputs() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]string, 0, len(t.files)+len(t.dirs))
	for f := range t.files {
		if f != "." {
			out = append(out, f)
		}
	}
	for d := range t.dirs {
		if d == "." {
			out = append(out, "./")
			continue
		}
		out = append(out, d+"/")
	}
	sort.Strings(out)
	return out
}

func (t *treeFS) Open(p string) (filesys.File, error) {
	real, err := t.resolve(p)
	if err != nil {
		return nil, err
	}
	t.recordFile(p, real)
	return t.disk.Open(real)
}

func (t *treeFS) ReadFile(p string) ([]byte, error) {
	real, err := t.resolve(p)
	if err != nil {
		return nil, err
	}
	t.recordFile(p, real)
	data, err := t.disk.ReadFile(real)
	if err != nil {
		return nil, err
	}
	return data, t.count(real, int64(len(data)))
}

// count bounds the build as it goes, where the check before it could not
// see: a remote base's kustomizations, a file read over and over.
func (t *treeFS) count(real string, size int64) error {
	t.mu.Lock()
	t.read += size
	if slices.Contains(konfig.RecognizedKustomizationFileNames(), filepath.Base(real)) {
		t.builds++
	}
	builds, read := t.builds, t.read
	t.mu.Unlock()
	switch {
	case builds > t.limits.Builds:
		return fmt.Errorf("%s: %w: the build read more than %d kustomization files (bases included many times over?)", t.name(real), ErrLimit, t.limits.Builds)
	case read > t.limits.ReadBytes:
		return fmt.Errorf("%s: %w: the build read more than %d bytes of files", t.name(real), ErrLimit, t.limits.ReadBytes)
	}
	return nil
}

func (t *treeFS) Exists(p string) bool {
	real, err := t.resolve(p)
	if err != nil {
		return false
	}
	if !t.disk.IsDir(real) {
		t.recordFile(p, real)
	}
	return t.disk.Exists(real)
}

func (t *treeFS) IsDir(p string) bool {
	real, err := t.resolve(p)
	if err != nil {
		return false
	}
	return t.disk.IsDir(real)
}

func (t *treeFS) ReadDir(p string) ([]string, error) {
	real, err := t.resolve(p)
	if err != nil {
		return nil, err
	}
	t.recordDir(real)
	return t.disk.ReadDir(real)
}

// CleanedAbs is how kustomize confirms each directory it builds, its own
// or a base's, before it reads the kustomization there: the moment to check
// that kustomization, which matters for a clone no check before the build
// could see.
func (t *treeFS) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	real, err := t.resolve(p)
	if err != nil {
		return "", "", err
	}
	dir, file, err := t.disk.CleanedAbs(real)
	if err == nil && file == "" {
		err = t.checkDir(string(dir), false)
	}
	return dir, file, err
}

func (t *treeFS) Glob(pattern string) ([]string, error) {
	dir, err := t.resolve(filepath.Dir(pattern))
	if err != nil {
		return nil, err
	}
	t.recordDir(dir)
	matches, err := t.disk.Glob(filepath.Join(dir, filepath.Base(pattern)))
	if err != nil {
		return nil, err
	}
	kept := matches[:0]
	for _, m := range matches {
		if _, err := t.resolve(m); err == nil {
			kept = append(kept, m)
		}
	}
	return kept, nil
}

func (t *treeFS) Walk(p string, walkFn filepath.WalkFunc) error {
	real, err := t.resolve(p)
	if err != nil {
		return err
	}
	return t.disk.Walk(real, func(path string, info os.FileInfo, err error) error {
		if err == nil && info.IsDir() {
			t.recordDir(path)
		} else if err == nil {
			t.recordFile(path, path)
		}
		return walkFn(path, info, err)
	})
}

func (t *treeFS) Create(string) (filesys.File, error) { return nil, errReadOnly }
func (t *treeFS) Mkdir(string) error                  { return errReadOnly }
func (t *treeFS) MkdirAll(string) error               { return errReadOnly }
func (t *treeFS) RemoveAll(p string) error            { return t.removeClone(p) }
func (t *treeFS) WriteFile(string, []byte) error      { return errReadOnly }

var _ filesys.FileSystem = (*treeFS)(nil)
