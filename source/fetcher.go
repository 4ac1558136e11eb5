// Package source gives workers the repository tree at an exact commit.
//
// Trees are downloaded as GitHub tarballs, extracted safely (see extract.go)
// and cached on disk per repository and commit, so the jobs of one commit
// download it once; the cache is pruned by age, count and total bytes
// (cache.go).
package source

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"strata.dev/strata/version"
)

// Archiver returns a URL from which the gzipped tarball of owner/repo at sha
// can be downloaded without credentials.
type Archiver interface {
	ArchiveURL(ctx context.Context, owner, repo, sha string) (string, error)
}

// Options are the Fetcher's limits. Zero values take the defaults.
type Options struct {
	MaxBytes     int64         // uncompressed size of a tree; default 1 GiB
	MaxFileBytes int64         // one file; default 100 MiB, GitHub's own limit
	MaxFiles     int           // entries in a tree; default 100,000
	HTTPClient   *http.Client  // downloads archive URLs; default has a 10 minute timeout
	Keep         int           // trees kept when unused; default 32
	MaxAge       time.Duration // unused trees older than this are pruned; default 24h
	// MaxCacheBytes bounds the trees kept on disk: beyond it, the least
	// recently used trees not in use are pruned; default 5 GiB.
	MaxCacheBytes int64
}

// Fetcher downloads and caches repository trees under one directory. Only
// one Fetcher may use a directory at a time.
type Fetcher struct {
	dir   string
	opts  Options
	group singleflight.Group
	now   func() time.Time

	mu      sync.Mutex
	entries map[string]*entry // by key: owner/repo/sha, lower case
}

type entry struct {
	dir      string
	users    int
	lastUsed time.Time
	size     int64 // bytes of its files
	// fresh: downloaded and not acquired yet. The byte bound spares it, or
	// a full cache would prune a tree before its waiters get it, and they
	// would download it again and again.
	fresh bool
}

// New returns a Fetcher caching trees in dir. Trees already in dir from an
// earlier run are reused; unfinished extractions are removed.
func New(dir string, opts Options) (*Fetcher, error) {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 1 << 30
	}
	if opts.MaxFileBytes <= 0 {
		opts.MaxFileBytes = 100 << 20
	}
	if opts.MaxFiles <= 0 {
		opts.MaxFiles = 100_000
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Minute}
	}
	if opts.Keep <= 0 {
		opts.Keep = 32
	}
	if opts.MaxAge <= 0 {
		opts.MaxAge = 24 * time.Hour
	}
	if opts.MaxCacheBytes <= 0 {
		opts.MaxCacheBytes = 5 << 30
	}
	f := &Fetcher{dir: dir, opts: opts, now: time.Now, entries: map[string]*entry{}}
	if err := os.RemoveAll(f.tmpDir()); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(f.tmpDir(), 0o755); err != nil {
		return nil, err
	}
	return f, f.load()
}

var (
	shaPattern   = regexp.MustCompile(`^[0-9a-fA-F]{40}$`)
	ownerPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*$`)
	repoPattern  = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
)

// Fetch returns the directory holding owner/repo at sha. The caller must not
// modify it, and must call release when done so the tree can be pruned.
// Concurrent calls for one commit share one download; the download uses the
// first caller's Archiver and goes on when that caller gives up, since
// others may be waiting for it.
func (f *Fetcher) Fetch(ctx context.Context, a Archiver, owner, repo, sha string) (root string, release func(), err error) {
	if !shaPattern.MatchString(sha) {
		return "", nil, fmt.Errorf("fetch %s/%s: %q is not a commit SHA", owner, repo, sha)
	}
	if !validNames(owner, repo) {
		return "", nil, fmt.Errorf("fetch %s/%s@%s: invalid repository name", owner, repo, sha)
	}
	key := strings.ToLower(owner + "/" + repo + "/" + sha)
	for {
		if root, release, ok := f.acquire(key); ok {
			return root, release, nil
		}
		ch := f.group.DoChan(key, func() (any, error) {
			return nil, f.download(context.WithoutCancel(ctx), a, key, owner, repo, sha)
		})
		select {
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case res := <-ch:
			if res.Err != nil {
				return "", nil, res.Err
			}
		}
		// Loop: the new entry is acquired like a cached one. A Prune in
		// between may have removed it, then it is downloaded again.
	}
}

// validNames keeps owner and repo usable as path elements.
func validNames(owner, repo string) bool {
	return ownerPattern.MatchString(owner) && repoPattern.MatchString(repo) && repo != "." && repo != ".."
}

func (f *Fetcher) acquire(key string) (string, func(), bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	e, ok := f.entries[key]
	if !ok {
		return "", nil, false
	}
	e.users++
	e.lastUsed = f.now()
	e.fresh = false
	var once sync.Once
	release := func() {
		once.Do(func() {
			f.mu.Lock()
			defer f.mu.Unlock()
			e.users--
			e.lastUsed = f.now()
		})
	}
	return e.dir, release, true
}

// download extracts the tree into a temporary directory and renames it into
// place, so a tree is either complete or absent, even after a crash.
func (f *Fetcher) download(ctx context.Context, a Archiver, key, owner, repo, sha string) error {
	name := fmt.Sprintf("%s/%s@%s", owner, repo, sha)
	link, err := a.ArchiveURL(ctx, owner, repo, sha)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", name, withoutSecrets(err))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", name, withoutSecrets(err))
	}
	req.Header.Set("User-Agent", version.UserAgent()) // GitHub asks every client to name itself
	resp, err := f.opts.HTTPClient.Do(req)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", name, withoutSecrets(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("fetch %s: archive download: %s", name, resp.Status)
	}

	tmp, err := os.MkdirTemp(f.tmpDir(), "tree-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // a no-op once renamed
	lim := limits{maxBytes: f.opts.MaxBytes, maxFileBytes: f.opts.MaxFileBytes, maxFiles: f.opts.MaxFiles}
	if err := extract(resp.Body, tmp, name, lim); err != nil {
		return err
	}
	// MkdirTemp makes 0700 directories; the tree is read by tools as any user.
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}

	final := filepath.Join(f.dir, filepath.FromSlash(key))
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return err
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, serr := os.Stat(final); serr != nil {
			return fmt.Errorf("fetch %s: %w", name, err)
		}
		// Already there (complete, since only renames create it).
	}
	size, err := treeBytes(final)
	if err != nil {
		return fmt.Errorf("fetch %s: %w", name, err)
	}
	f.mu.Lock()
	f.entries[key] = &entry{dir: final, lastUsed: f.now(), size: size, fresh: true}
	f.mu.Unlock()
	// Keep the cache bounded at each download (the periodic housekeeping
	// job prunes too). A failed removal is retried by the next Prune; it is
	// not this fetch's failure.
	_ = f.Prune()
	return nil
}

func (f *Fetcher) tmpDir() string { return filepath.Join(f.dir, ".tmp") }
