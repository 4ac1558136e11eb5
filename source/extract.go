package source

import (
	"archive/tar"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// LimitError reports an archive that is larger than the server allows. Env
// names the server setting that raises the limit.
type LimitError struct {
	Repo  string // owner/repo@sha
	What  string // "size", "file size", "entry count"
	Limit int64
	Env   string
}

func (e *LimitError) Error() string {
	if e.What == "entry count" {
		return fmt.Sprintf("repository archive for %s has more than %d entries (%s)", e.Repo, e.Limit, e.Env)
	}
	return fmt.Sprintf("repository archive for %s exceeds %s %s limit (%s)", e.Repo, formatBytes(e.Limit), e.What, e.Env)
}

// UnsafeEntryError reports an archive entry that would write outside the tree.
// GitHub never produces one, so the whole archive is refused rather than
// extracted in part.
type UnsafeEntryError struct {
	Repo   string
	Entry  string
	Reason string
}

func (e *UnsafeEntryError) Error() string {
	return fmt.Sprintf("repository archive for %s: entry %q %s", e.Repo, e.Entry, e.Reason)
}

// limits are the caps applied while extracting one archive.
type limits struct {
	maxBytes, maxFileBytes int64
	maxFiles               int
}

// extract unpacks a gzipped tarball from GitHub into dir, which must exist
// and be empty. The tarball's single top-level folder
// ("owner-repo-sha7/") is stripped. Every file operation goes through an
// os.Root, so nothing can be created outside dir even if a check below is
// wrong; the checks are there to refuse such archives with a clear error.
func extract(r io.Reader, dir, repo string, lim limits) error {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return fmt.Errorf("repository archive for %s: %w", repo, err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()

	x := extractor{root: root, repo: repo, lim: lim}
	tr := tar.NewReader(zr)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("repository archive for %s: %w", repo, err)
		}
		if err := x.entry(hdr, tr); err != nil {
			return err
		}
	}
	return x.checkSymlinks()
}

type extractor struct {
	root     *os.Root
	repo     string
	lim      limits
	prefix   string // the top-level folder, from the first entry
	entries  int
	total    int64
	symlinks []string
}

func (x *extractor) entry(hdr *tar.Header, body io.Reader) error {
	x.entries++
	if x.entries > x.lim.maxFiles {
		return &LimitError{Repo: x.repo, What: "entry count", Limit: int64(x.lim.maxFiles), Env: "STRATA_SOURCE_MAX_FILES"}
	}
	// Count every entry's size, skipped ones too: their bytes are still
	// decompressed.
	x.total += hdr.Size
	if x.total > x.lim.maxBytes {
		return &LimitError{Repo: x.repo, What: "size", Limit: x.lim.maxBytes, Env: "STRATA_SOURCE_MAX_BYTES"}
	}
	if hdr.Typeflag == tar.TypeXGlobalHeader { // GitHub's commit comment
		return nil
	}
	name, err := x.localName(hdr.Name)
	if err != nil || name == "" {
		return err
	}

	switch hdr.Typeflag {
	case tar.TypeDir:
		return x.wrap(hdr.Name, x.root.MkdirAll(name, 0o755))
	case tar.TypeReg:
		if hdr.Size > x.lim.maxFileBytes {
			return &LimitError{Repo: x.repo, What: "file size", Limit: x.lim.maxFileBytes, Env: "STRATA_SOURCE_MAX_FILE_BYTES"}
		}
		return x.wrap(hdr.Name, x.file(name, fileMode(hdr.Mode), body))
	case tar.TypeSymlink:
		if err := x.checkLinkTarget(hdr.Name, name, hdr.Linkname); err != nil {
			return err
		}
		if err := x.mkParent(name); err != nil {
			return x.wrap(hdr.Name, err)
		}
		x.symlinks = append(x.symlinks, name)
		return x.wrap(hdr.Name, x.root.Symlink(hdr.Linkname, name))
	case tar.TypeLink:
		// A hard link names another entry of the archive, not a path
		// relative to the link.
		old, err := x.localName(hdr.Linkname)
		if err != nil {
			return err
		}
		if old == "" {
			return &UnsafeEntryError{Repo: x.repo, Entry: hdr.Name, Reason: "is a hard link to the archive root"}
		}
		if err := x.mkParent(name); err != nil {
			return x.wrap(hdr.Name, err)
		}
		return x.wrap(hdr.Name, x.root.Link(old, name))
	default:
		// Devices, fifos and anything else have no place in a source tree.
		return nil
	}
}

// localName turns an entry name into a path relative to the tree, or ""
// for the top-level folder itself.
func (x *extractor) localName(name string) (string, error) {
	if strings.HasPrefix(name, "/") || strings.Contains(name, "\\") || strings.ContainsRune(name, 0) {
		return "", &UnsafeEntryError{Repo: x.repo, Entry: name, Reason: "has an absolute or invalid path"}
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", &UnsafeEntryError{Repo: x.repo, Entry: name, Reason: "leaves the repository"}
		}
	}
	top, rest, _ := strings.Cut(strings.TrimPrefix(path.Clean(name), "./"), "/")
	if x.prefix == "" {
		x.prefix = top
	}
	if top != x.prefix {
		return "", &UnsafeEntryError{Repo: x.repo, Entry: name, Reason: fmt.Sprintf("is outside the archive's folder %q", x.prefix)}
	}
	if rest != "" && !filepath.IsLocal(rest) {
		return "", &UnsafeEntryError{Repo: x.repo, Entry: name, Reason: "has an invalid path"}
	}
	return rest, nil
}

// checkLinkTarget allows relative symlinks whose target, read from the
// link's folder, stays inside the tree. Links through other links are
// checked once the tree is complete (checkSymlinks).
func (x *extractor) checkLinkTarget(entry, name, target string) error {
	if target == "" || path.IsAbs(target) || strings.ContainsRune(target, 0) {
		return &UnsafeEntryError{Repo: x.repo, Entry: entry, Reason: fmt.Sprintf("is a symlink to %q, outside the repository", target)}
	}
	if !filepath.IsLocal(path.Join(path.Dir(name), target)) {
		return &UnsafeEntryError{Repo: x.repo, Entry: entry, Reason: fmt.Sprintf("is a symlink to %q, outside the repository", target)}
	}
	return nil
}

// checkSymlinks resolves every symlink through the os.Root, which refuses
// any resolution that leaves the tree (for example a link to "sub/.."
// where sub is itself a link to ".."). A link to a missing file inside the
// tree is allowed: git stores those too.
func (x *extractor) checkSymlinks() error {
	for _, name := range x.symlinks {
		_, err := x.root.Stat(name)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return &UnsafeEntryError{Repo: x.repo, Entry: name, Reason: fmt.Sprintf("is a symlink that does not resolve inside the repository: %v", err)}
		}
	}
	return nil
}

func (x *extractor) file(name string, mode os.FileMode, body io.Reader) error {
	if err := x.mkParent(name); err != nil {
		return err
	}
	// O_EXCL: never write through an existing file or symlink.
	f, err := x.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, body)
	if err == nil {
		err = f.Chmod(mode) // exact mode, whatever the umask
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (x *extractor) mkParent(name string) error {
	if dir := path.Dir(name); dir != "." {
		return x.root.MkdirAll(dir, 0o755)
	}
	return nil
}

func (x *extractor) wrap(entry string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("repository archive for %s: entry %q: %w", x.repo, entry, err)
}

// fileMode keeps only what git itself records: executable or not.
func fileMode(mode int64) os.FileMode {
	if mode&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

func formatBytes(n int64) string {
	const kib, mib, gib = 1 << 10, 1 << 20, 1 << 30
	switch {
	case n >= gib && n%gib == 0:
		return fmt.Sprintf("%d GiB", n/gib)
	case n >= mib && n%mib == 0:
		return fmt.Sprintf("%d MiB", n/mib)
	case n >= kib && n%kib == 0:
		return fmt.Sprintf("%d KiB", n/kib)
	}
	return fmt.Sprintf("%d bytes", n)
}
