package source

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The cache on disk: trees are kept per repository and commit while they
// are used, and pruned by age, count and total size.

// Prune removes trees that are not in use and are older than MaxAge, or
// beyond the Keep most recently used ones, or, least recently used first,
// beyond MaxCacheBytes in all.
func (f *Fetcher) Prune() error {
	f.mu.Lock()
	keys := make([]string, 0, len(f.entries))
	var total int64
	for k, e := range f.entries {
		keys = append(keys, k)
		total += e.size
	}
	sort.Slice(keys, func(i, j int) bool {
		return f.entries[keys[i]].lastUsed.After(f.entries[keys[j]].lastUsed)
	})
	now := f.now()
	prune := map[string]bool{}
	for i, k := range keys {
		e := f.entries[k]
		if e.users == 0 && (i >= f.opts.Keep || now.Sub(e.lastUsed) > f.opts.MaxAge) {
			prune[k] = true
			total -= e.size
		}
	}
	for i := len(keys) - 1; i >= 0 && total > f.opts.MaxCacheBytes; i-- {
		if e := f.entries[keys[i]]; e.users == 0 && !e.fresh && !prune[keys[i]] {
			prune[keys[i]] = true
			total -= e.size
		}
	}
	var trash []string
	var errs []error
	for _, k := range keys {
		if !prune[k] {
			continue
		}
		// Rename first (atomic, quick) so a new download of the same
		// commit never meets a half-removed tree.
		t, err := os.MkdirTemp(f.tmpDir(), "prune-")
		if err == nil {
			err = os.Rename(f.entries[k].dir, filepath.Join(t, "tree"))
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		delete(f.entries, k)
		trash = append(trash, t)
	}
	f.mu.Unlock()
	for _, t := range trash {
		if err := os.RemoveAll(t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// CacheBytes is the size of the trees on disk.
func (f *Fetcher) CacheBytes() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	var n int64
	for _, e := range f.entries {
		n += e.size
	}
	return n
}

// treeBytes adds up the sizes of the files under dir (links not followed).
func treeBytes(dir string) (int64, error) {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	return n, err
}

// load registers the trees left by an earlier run (dir/owner/repo/sha).
func (f *Fetcher) load() error {
	matches, err := filepath.Glob(filepath.Join(f.dir, "*", "*", "*"))
	if err != nil {
		return err
	}
	for _, m := range matches {
		rel, err := filepath.Rel(f.dir, m)
		if err != nil {
			continue
		}
		parts := strings.Split(filepath.ToSlash(rel), "/")
		if len(parts) != 3 || !validNames(parts[0], parts[1]) || !shaPattern.MatchString(parts[2]) {
			continue
		}
		info, err := os.Lstat(m)
		if err != nil || !info.IsDir() {
			continue
		}
		key := strings.ToLower(filepath.ToSlash(rel))
		if key != filepath.ToSlash(rel) {
			continue
		}
		size, err := treeBytes(m)
		if err != nil {
			return err
		}
		f.entries[key] = &entry{dir: m, lastUsed: info.ModTime(), size: size}
	}
	return nil
}
