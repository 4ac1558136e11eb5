//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

func kernelABI() int {
	v, err := llsyscall.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// confine restricts the calling thread to s's paths and the system's, and
// locks the goroutine to it for good: the launcher execs from this thread,
// and the program inherits its restriction. Only the file system and IPC
// scopes (signals, abstract sockets to processes outside) are restricted;
// the network is not, providers need it.
func confine(s Spec) error {
	if abi := kernelABI(); abi < MinABI {
		return Status{ABI: abi}.Err()
	}
	rules, err := rules(s)
	if err != nil {
		return err
	}
	cfg := landlock.Config{HandledAccessFS: landlock.V11.HandledAccessFS, Scoped: landlock.V11.Scoped}
	// BestEffort handles what this kernel's ABI can (3 at least, checked
	// above); the audit log records denials of the program, so an operator
	// can see which path a layer missed.
	fd, flags, err := cfg.BestEffort().EnableLoggingForSubprocesses().NewRulesetFD(rules...)
	if err != nil {
		return err
	}
	if fd < 0 {
		return errors.New("Landlock would restrict nothing")
	}
	defer unix.Close(fd)
	runtime.LockOSThread() // never unlocked: see above
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := llsyscall.LandlockRestrictSelf(fd, flags); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

// rules are s's paths and the system's. s's paths must exist; the system's
// that this host lacks are left out.
func rules(s Spec) ([]landlock.Rule, error) {
	rw, err := byKind(s.ReadWrite, false)
	if err != nil {
		return nil, err
	}
	ro, err := byKind(append([]string{s.Program}, s.ReadOnly...), false)
	if err != nil {
		return nil, err
	}
	sys, err := byKind(systemReadOnly, true)
	if err != nil {
		return nil, err
	}
	dev, err := byKind(systemReadWrite, true)
	if err != nil {
		return nil, err
	}
	return []landlock.Rule{
		// Refer lets a program move files between its own directories
		// (an install into the plugin cache, a download into the work dir).
		landlock.RWDirs(rw.dirs...).WithRefer(),
		landlock.RWFiles(rw.files...),
		landlock.RODirs(ro.dirs...),
		landlock.ROFiles(ro.files...),
		landlock.RODirs(sys.dirs...),
		landlock.ROFiles(sys.files...),
		landlock.RWFiles(dev.files...),
	}, nil
}

type paths struct{ dirs, files []string }

// byKind sorts paths into directories and files, which Landlock grants
// different rights; a missing path is an error unless skipMissing.
func byKind(list []string, skipMissing bool) (paths, error) {
	var p paths
	for _, path := range list {
		fi, err := os.Stat(path)
		if err != nil {
			if skipMissing && errors.Is(err, os.ErrNotExist) {
				continue
			}
			return p, err
		}
		if fi.IsDir() {
			p.dirs = append(p.dirs, path)
		} else {
			p.files = append(p.files, path)
		}
	}
	return p, nil
}
