package source

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestTwoJobsOnOneCommitShareOneDownload(t *testing.T) {
	srv := serve(t, tarball(t, file("main.tf", "x", 0o644)))
	synctest.Test(t, func(t *testing.T) {
		// No keep-alive: idle connection goroutines would outlive the bubble.
		client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
		f := newFetcher(t, Options{HTTPClient: client})
		a := &archiver{url: srv.URL, gate: make(chan struct{})}

		var wg sync.WaitGroup
		roots := make([]string, 2)
		for i := range roots {
			wg.Go(func() {
				root, release, err := f.Fetch(t.Context(), a, "acme", "infra", testSHA)
				if err != nil {
					t.Error(err)
					return
				}
				defer release()
				roots[i] = root
			})
		}
		synctest.Wait() // both jobs are waiting: one on the archiver, one on the first
		close(a.gate)
		wg.Wait()

		if roots[0] == "" || roots[0] != roots[1] {
			t.Errorf("roots = %q", roots)
		}
		if n := srv.downloads.Load(); n != 1 {
			t.Errorf("downloads = %d, want 1", n)
		}
		if n := a.calls.Load(); n != 1 {
			t.Errorf("archive links = %d, want 1", n)
		}
	})
}

func TestFetchAfterReleaseUsesTheCache(t *testing.T) {
	srv := serve(t, tarball(t, file("main.tf", "x", 0o644)))
	f := newFetcher(t, Options{})
	a := &archiver{url: srv.URL}

	root1, release, err := f.Fetch(t.Context(), a, "acme", "infra", testSHA)
	if err != nil {
		t.Fatal(err)
	}
	release()
	release() // twice is harmless
	root2, release, err := f.Fetch(t.Context(), a, "Acme", "Infra", testSHA)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if root1 != root2 || srv.downloads.Load() != 1 {
		t.Errorf("roots %q, %q after %d downloads; want one tree, one download", root1, root2, srv.downloads.Load())
	}

	// A restarted server finds the tree on disk.
	f2, err := New(f.dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, release, err := f2.Fetch(t.Context(), a, "acme", "infra", testSHA); err != nil {
		t.Fatal(err)
	} else {
		release()
	}
	if srv.downloads.Load() != 1 {
		t.Errorf("downloads = %d after restart, want 1", srv.downloads.Load())
	}
}

func TestPruneRemovesOldUnusedTreesOnly(t *testing.T) {
	srv := serve(t, tarball(t, file("main.tf", "x", 0o644)))
	f := newFetcher(t, Options{MaxAge: time.Hour, Keep: 2})
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	f.now = func() time.Time { return now }
	a := &archiver{url: srv.URL}

	sha := func(i int) string { return testSHA[:39] + strconv.Itoa(i) }
	fetch := func(i int) (string, func()) {
		t.Helper()
		root, release, err := f.Fetch(t.Context(), a, "acme", "infra", sha(i))
		if err != nil {
			t.Fatal(err)
		}
		return root, release
	}

	oldInUse, _ := fetch(1)
	oldUnused, release := fetch(2)
	release()
	now = now.Add(2 * time.Hour)
	if err := f.Prune(); err != nil {
		t.Fatal(err)
	}
	wantTree(t, oldInUse, true)
	wantTree(t, oldUnused, false)

	// Keep: 2 — the oldest unused trees beyond two go.
	var recent []string
	for i := 3; i <= 5; i++ {
		now = now.Add(time.Minute)
		root, release := fetch(i)
		release()
		recent = append(recent, root)
	}
	if err := f.Prune(); err != nil {
		t.Fatal(err)
	}
	wantTree(t, oldInUse, true) // in use: kept, though old and beyond Keep
	wantTree(t, recent[0], false)
	wantTree(t, recent[1], true)
	wantTree(t, recent[2], true)

	// A pruned commit is downloaded again.
	before := srv.downloads.Load()
	root, release := fetch(2)
	release()
	wantTree(t, root, true)
	if srv.downloads.Load() != before+1 {
		t.Errorf("pruned tree was not downloaded again")
	}
}

func wantTree(t *testing.T, root string, exists bool) {
	t.Helper()
	_, err := os.Stat(filepath.Join(root, "main.tf"))
	if exists && err != nil {
		t.Errorf("%s: %v, want the tree", root, err)
	}
	if !exists && !os.IsNotExist(err) {
		t.Errorf("%s: want it pruned, got %v", root, err)
	}
}

func TestInterruptedDownloadLeavesNoTree(t *testing.T) {
	archive := tarball(t, dir("a/"), file("a/main.tf", string(make([]byte, 64<<10)), 0o644), file("b.tf", "x", 0o644))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Promise the whole archive, send half: the client sees an
		// unexpected EOF in the middle of the tar stream.
		w.Header().Set("Content-Length", strconv.Itoa(len(archive)))
		w.Write(archive[:len(archive)/2])
	}))
	defer srv.Close()
	f := newFetcher(t, Options{})

	if _, _, err := f.Fetch(t.Context(), &archiver{url: srv.URL}, "acme", "infra", testSHA); err == nil {
		t.Fatal("want an error")
	}
	wantNoTree(t, f)

	// The next attempt starts from scratch and succeeds.
	good := serve(t, archive)
	root, release, err := f.Fetch(t.Context(), &archiver{url: good.URL}, "acme", "infra", testSHA)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	for _, name := range []string{"a/main.tf", "b.tf"} {
		if _, err := os.Stat(filepath.Join(root, name)); err != nil {
			t.Error(err)
		}
	}
}

func TestNewRemovesUnfinishedExtractions(t *testing.T) {
	f := newFetcher(t, Options{})
	half := filepath.Join(f.tmpDir(), "tree-123", "a")
	if err := os.MkdirAll(half, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := New(f.dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(half); !os.IsNotExist(err) {
		t.Errorf("unfinished extraction survived: %v", err)
	}
}

// Trees of 1,000 bytes under a 2,500-byte bound -> the least recently used
// trees not in use go, a tree in use stays though the cache is over its
// bound, and a restarted fetcher sizes the trees it finds and keeps to its
// bound too.
func TestCacheIsBoundedByBytes(t *testing.T) {
	srv := serve(t, tarball(t, file("main.tf", string(make([]byte, 1000)), 0o644)))
	f := newFetcher(t, Options{MaxCacheBytes: 2500})
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	f.now = func() time.Time { now = now.Add(time.Minute); return now }
	a := &archiver{url: srv.URL}
	sha := func(i int) string { return testSHA[:39] + strconv.Itoa(i) }
	fetch := func(i int) (string, func()) {
		t.Helper()
		root, release, err := f.Fetch(t.Context(), a, "acme", "infra", sha(i))
		if err != nil {
			t.Fatal(err)
		}
		return root, release
	}

	inUse, _ := fetch(1)
	second, release := fetch(2)
	release()
	third, release := fetch(3)
	release()
	// 3,000 bytes: the least recently used tree not in use (the second) goes.
	wantTree(t, inUse, true)
	wantTree(t, second, false)
	wantTree(t, third, true)
	if n := f.CacheBytes(); n != 2000 {
		t.Errorf("cache holds %d bytes, want 2000", n)
	}

	// The tree in use is over the bound with two more: they go, it stays.
	fourth, release := fetch(4)
	release()
	wantTree(t, inUse, true)
	wantTree(t, third, false)
	wantTree(t, fourth, true)

	// A restart with a smaller bound prunes what it found on disk.
	f2, err := New(f.dir, Options{MaxCacheBytes: 1500})
	if err != nil {
		t.Fatal(err)
	}
	if n := f2.CacheBytes(); n != 2000 {
		t.Errorf("restarted cache sized %d bytes, want 2000", n)
	}
	if err := f2.Prune(); err != nil {
		t.Fatal(err)
	}
	if n := f2.CacheBytes(); n != 1000 {
		t.Errorf("restarted cache holds %d bytes after pruning, want 1000", n)
	}
}
