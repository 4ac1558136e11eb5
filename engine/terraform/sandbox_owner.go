package terraform

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"strata.dev/strata/sandbox"
)

// handOver makes a run's files usable by the user Terraform runs as when
// the server is root (Report.User): the paths it writes (the tree, the
// scratch dir, the plugin cache, the operator's read_write paths) become
// its own, and those it reads that hold no secret (the binary, the
// provider mirrors) readable by others. Every directory above them gets
// search permission for others (o+x: enter, not list), or the user could
// not reach them: a data dir or a test's temporary dir is 0700. The
// operator's read_only paths (a credentials file) are not widened: each
// must be readable by the user already, or the run says which is not.
// Landlock still confines what it may open; this is what plain file
// permissions must allow besides. It runs before each command: the server
// writes files into the tree and the scratch dir between commands (a
// restored init, the saved plan to apply).
func handOver(u *sandbox.Credential, writable, readable, checked []string) error {
	if u == nil {
		return nil
	}
	for _, p := range writable {
		if err := searchableAbove(p); err != nil {
			return err
		}
		if err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return ownBy(path, u)
		}); err != nil {
			return err
		}
	}
	for _, p := range checked {
		if err := searchableAbove(p); err != nil {
			return err
		}
		if !readableBy(p, u) {
			return fmt.Errorf("terraform.sandbox_paths.read_only %s is not readable by uid %d (terraform.sandbox_user): give it to that user or group, or make it readable", p, u.UID)
		}
	}
	for _, p := range readable {
		if err := searchableAbove(p); err != nil {
			return err
		}
		if err := filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.Type()&fs.ModeSymlink != 0 {
				return err
			}
			return readableByOthers(path)
		}); err != nil {
			return err
		}
	}
	return nil
}

func ownBy(path string, u *sandbox.Credential) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == u.UID && int(st.Gid) == u.GID {
		return nil
	}
	return os.Lchown(path, u.UID, u.GID)
}

// readableByOthers adds o+r to a file (o+x too when its owner may execute
// it) and o+rx to a directory.
func readableByOthers(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	mode := fi.Mode().Perm()
	want := mode | 0o004
	if fi.IsDir() || mode&0o100 != 0 {
		want |= 0o001
	}
	if want == mode {
		return nil
	}
	return os.Chmod(path, want|fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
}

// searchableAbove adds o+x to every directory above path that lacks it.
func searchableAbove(path string) error {
	for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
		fi, err := os.Stat(dir)
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return errors.New(dir + " is not a directory")
		}
		if fi.Mode().Perm()&0o001 == 0 {
			if err := os.Chmod(dir, fi.Mode().Perm()|0o001|fi.Mode()&(fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
				return err
			}
		}
		if dir == filepath.Dir(dir) {
			return nil
		}
	}
}

// readableBy says whether u may read path (and list it, a directory), by
// its mode bits.
func readableBy(path string, u *sandbox.Credential) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	need := fs.FileMode(0o4)
	if fi.IsDir() {
		need = 0o5
	}
	mode := fi.Mode().Perm()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		switch {
		case int(st.Uid) == u.UID:
			return mode>>6&need == need
		case int(st.Gid) == u.GID:
			return mode>>3&need == need
		}
	}
	return mode&need == need
}
