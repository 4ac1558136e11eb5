package source

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

const (
	testSHA = "0123456789abcdef0123456789abcdef01234567"
	top     = "acme-infra-0123456/"
)

// tarball builds a gzipped tarball like GitHub's: a global header carrying
// the commit, then everything under one top-level folder.
func tarball(t testing.TB, entries ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	all := append([]*tar.Header{
		{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header", PAXRecords: map[string]string{"comment": testSHA}},
		{Typeflag: tar.TypeDir, Name: top, Mode: 0o775},
	}, entries...)
	for _, h := range all {
		body := ""
		if h.Typeflag == tar.TypeReg {
			body = h.Linkname // test shorthand: a file's content travels in Linkname
			h.Linkname = ""
			if h.Size == 0 {
				h.Size = int64(len(body))
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil && !errors.Is(err, tar.ErrWriteTooLong) {
			t.Fatal(err)
		}
	}
	// Close errors when a declared size was not written (oversize tests);
	// the truncated stream is what those tests want.
	tw.Close()
	zw.Close()
	return buf.Bytes()
}

func dir(name string) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeDir, Name: top + name, Mode: 0o775}
}
func file(name, content string, mode int64) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeReg, Name: top + name, Linkname: content, Mode: mode}
}
func symlink(name, target string) *tar.Header {
	return &tar.Header{Typeflag: tar.TypeSymlink, Name: top + name, Linkname: target, Mode: 0o777}
}

// server serves one archive and counts downloads.
type server struct {
	*httptest.Server
	archive   atomic.Pointer[[]byte]
	downloads atomic.Int32
}

func serve(t testing.TB, archive []byte) *server {
	s := &server{}
	s.archive.Store(&archive)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.downloads.Add(1)
		w.Write(*s.archive.Load())
	}))
	t.Cleanup(s.Close)
	return s
}

// archiver is a fake Archiver pointing at a test server.
type archiver struct {
	url   string
	calls atomic.Int32
	gate  chan struct{} // when set, ArchiveURL waits for it
}

func (a *archiver) ArchiveURL(ctx context.Context, owner, repo, sha string) (string, error) {
	a.calls.Add(1)
	if a.gate != nil {
		<-a.gate
	}
	return a.url + "/" + owner + "/" + repo + "/tarball/" + sha, nil
}

func TestFetchExtractsTheTreeAtTheCommit(t *testing.T) {
	srv := serve(t, tarball(t,
		dir("infra/"),
		dir("infra/network/"),
		file("infra/network/main.tf", "resource \"terraform_data\" \"x\" {}\n", 0o664),
		file("bin/plan.sh", "#!/bin/sh\n", 0o775),
		file("setuid", "x", 0o4755),
		symlink("infra/current", "network"),
		symlink("infra/network/root.tf", "../../bin/plan.sh"),
		&tar.Header{Typeflag: tar.TypeLink, Name: top + "infra/copy.tf", Linkname: top + "infra/network/main.tf"},
		&tar.Header{Typeflag: tar.TypeFifo, Name: top + "fifo", Mode: 0o644},
		&tar.Header{Typeflag: tar.TypeChar, Name: top + "dev", Mode: 0o644, Devmajor: 1, Devminor: 3},
	))
	f := newFetcher(t, Options{})

	root, release, err := f.Fetch(t.Context(), &archiver{url: srv.URL}, "acme", "infra", testSHA)
	if err != nil {
		t.Fatal(err)
	}
	defer release()

	wantFile(t, root, "infra/network/main.tf", "resource \"terraform_data\" \"x\" {}\n", 0o644)
	wantFile(t, root, "bin/plan.sh", "#!/bin/sh\n", 0o755)
	wantFile(t, root, "setuid", "x", 0o755)
	wantFile(t, root, "infra/current/main.tf", "resource \"terraform_data\" \"x\" {}\n", 0o644)
	wantFile(t, root, "infra/network/root.tf", "#!/bin/sh\n", 0o755)
	wantFile(t, root, "infra/copy.tf", "resource \"terraform_data\" \"x\" {}\n", 0o644)
	if target, err := os.Readlink(filepath.Join(root, "infra/current")); err != nil || target != "network" {
		t.Errorf("infra/current -> %q, %v; want network", target, err)
	}
	for _, skipped := range []string{"fifo", "dev", top} {
		if _, err := os.Lstat(filepath.Join(root, skipped)); !os.IsNotExist(err) {
			t.Errorf("%s: want it skipped, got %v", skipped, err)
		}
	}
}

func wantFile(t *testing.T, root, name, content string, mode os.FileMode) {
	t.Helper()
	path := filepath.Join(root, name)
	got, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v", name, err)
		return
	}
	if string(got) != content {
		t.Errorf("%s = %q, want %q", name, got, content)
	}
	if info, err := os.Stat(path); err != nil || info.Mode() != mode {
		t.Errorf("%s mode = %v (%v), want %v", name, info.Mode(), err, mode)
	}
}

func TestFetchRefusesArchivesThatEscapeOrExceedLimits(t *testing.T) {
	big := strings.Repeat("x", 600)
	tests := []struct {
		name    string
		opts    Options
		entries []*tar.Header
		want    string
	}{
		{"parent path", Options{}, []*tar.Header{file("../evil", "pwned", 0o644)}, `"acme-infra-0123456/../evil" leaves the repository`},
		{"parent path at top", Options{}, []*tar.Header{{Typeflag: tar.TypeReg, Name: "../evil", Linkname: "pwned", Mode: 0o644}}, `"../evil" leaves the repository`},
		{"absolute path", Options{}, []*tar.Header{{Typeflag: tar.TypeReg, Name: "/tmp/evil", Linkname: "pwned", Mode: 0o644}}, "absolute or invalid path"},
		{"other top-level folder", Options{}, []*tar.Header{{Typeflag: tar.TypeReg, Name: "other/evil", Linkname: "pwned", Mode: 0o644}}, "outside the archive's folder"},
		{"symlink to /etc/passwd", Options{}, []*tar.Header{symlink("passwd", "/etc/passwd")}, `symlink to "/etc/passwd", outside the repository`},
		{"symlink out of the tree", Options{}, []*tar.Header{dir("a/"), symlink("a/x", "../../x")}, `symlink to "../../x", outside the repository`},
		{"file through an absolute symlink", Options{}, []*tar.Header{symlink("a", "/tmp"), file("a/evil", "pwned", 0o644)}, `symlink to "/tmp"`},
		{
			// Each link alone stays inside; together "a" is the tree's parent.
			"file through chained symlinks", Options{},
			[]*tar.Header{dir("d/"), symlink("d/y", ".."), symlink("a", "d/y/.."), file("a/evil", "pwned", 0o644)},
			"escapes",
		},
		{"dangling chained symlink", Options{}, []*tar.Header{dir("d/"), symlink("d/y", ".."), symlink("a", "d/y/..")}, `"a" is a symlink that does not resolve inside`},
		{"hard link out of the tree", Options{}, []*tar.Header{{Typeflag: tar.TypeLink, Name: top + "passwd", Linkname: "/etc/passwd"}}, "absolute or invalid path"},
		{"hard link up", Options{}, []*tar.Header{{Typeflag: tar.TypeLink, Name: top + "x", Linkname: top + "../x"}}, "leaves the repository"},
		{"total size", Options{MaxBytes: 1024}, []*tar.Header{file("a", big, 0o644), file("b", big, 0o644)}, "exceeds 1 KiB size limit (STRATA_SOURCE_MAX_BYTES)"},
		{"huge declared size", Options{MaxBytes: 1024}, []*tar.Header{{Typeflag: tar.TypeReg, Name: top + "a", Size: 1 << 40, Mode: 0o644}}, "exceeds 1 KiB size limit"},
		{"file size", Options{MaxFileBytes: 512}, []*tar.Header{file("a", big, 0o644)}, "exceeds 512 bytes file size limit (STRATA_SOURCE_MAX_FILE_BYTES)"},
		{"entry count", Options{MaxFiles: 5}, []*tar.Header{dir("a/"), file("a/1", "", 0o644), file("a/2", "", 0o644), file("a/3", "", 0o644)}, "has more than 5 entries (STRATA_SOURCE_MAX_FILES)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, tarball(t, tt.entries...))
			f := newFetcher(t, tt.opts)
			_, _, err := f.Fetch(t.Context(), &archiver{url: srv.URL}, "acme", "infra", testSHA)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
			if !strings.Contains(err.Error(), "acme/infra@"+testSHA) {
				t.Errorf("err = %v, want it to name the repository and commit", err)
			}
			wantNoTree(t, f)
			for _, p := range []string{"/tmp/evil", filepath.Join(filepath.Dir(f.dir), "evil"), filepath.Join(f.dir, "evil")} {
				if _, err := os.Lstat(p); err == nil {
					t.Errorf("%s was created", p)
				}
			}
		})
	}
}

func TestLimitErrorSaysTheLimit(t *testing.T) {
	err := &LimitError{Repo: "acme/infra@" + testSHA, What: "size", Limit: 1 << 30, Env: "STRATA_SOURCE_MAX_BYTES"}
	want := "repository archive for acme/infra@" + testSHA + " exceeds 1 GiB size limit (STRATA_SOURCE_MAX_BYTES)"
	if err.Error() != want {
		t.Errorf("got %q, want %q", err, want)
	}
}

func TestFetchRefusesNamesThatAreNotPaths(t *testing.T) {
	f := newFetcher(t, Options{})
	a := &archiver{url: "http://127.0.0.1:1"}
	for _, c := range []struct{ owner, repo, sha string }{
		{"acme", "infra", "main"},
		{"acme", "infra", "../../../../../../../etc/passwd0000000000"},
		{"acme", "infra", testSHA[:39]},
		{"..", "infra", testSHA},
		{"acme", "..", testSHA},
		{"acme", "a/b", testSHA},
		{".tmp", "x", testSHA},
	} {
		if _, _, err := f.Fetch(t.Context(), a, c.owner, c.repo, c.sha); err == nil {
			t.Errorf("Fetch(%q, %q, %q) succeeded", c.owner, c.repo, c.sha)
		}
	}
	if a.calls.Load() != 0 {
		t.Errorf("archiver called %d times", a.calls.Load())
	}
}

// wantNoTree checks that nothing that looks like a tree was left behind.
func wantNoTree(t *testing.T, f *Fetcher) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(f.dir, "acme", "infra", testSHA)); !os.IsNotExist(err) {
		t.Errorf("tree exists after a failed fetch (%v)", err)
	}
	left, _ := os.ReadDir(f.tmpDir())
	if len(left) != 0 {
		t.Errorf("temporary directories left: %v", left)
	}
	if len(f.entries) != 0 {
		t.Errorf("cache entries after a failed fetch: %v", f.entries)
	}
}

func newFetcher(t testing.TB, opts Options) *Fetcher {
	t.Helper()
	f, err := New(filepath.Join(t.TempDir(), "trees"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}
