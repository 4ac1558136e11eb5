//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// confineAndExec is the confined side: it builds the Landlock ruleset
// while it may still open every path, gives up every privilege, restricts
// itself and execs the program. It returns only on failure.
//
// Init runs on the main thread, locked to the main goroutine, and the
// restrictions below are the calling thread's (credentials, capabilities,
// Landlock, seccomp): the exec happens from the same thread, and the
// program inherits them all. No process can lift them, not even by
// running the launcher again.
func confineAndExec(raw string) error {
	s, err := readSpec(raw)
	if err != nil {
		return err
	}
	ruleset, flags := -1, uint32(0)
	if s.ABI > 0 {
		if ruleset, flags, err = landlockRuleset(s); err != nil {
			return fmt.Errorf("cannot confine %s: %w", s.Program, err)
		}
		defer unix.Close(ruleset)
	}
	if err := dropPrivileges(s.User); err != nil {
		return fmt.Errorf("cannot drop privileges: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if ruleset >= 0 {
		if err := llsyscall.LandlockRestrictSelf(ruleset, flags); err != nil {
			return fmt.Errorf("landlock_restrict_self: %w", err)
		}
	}
	if s.Seccomp {
		if err := loadFilter(guards{signals: s.GuardSignals, protected: s.Protected, truncate: s.GuardTruncate}); err != nil {
			return fmt.Errorf("seccomp: %w", err)
		}
	}
	return execProgram(s)
}

// dropPrivileges leaves the thread no capability in any set and, when u is
// set (the server is root), runs it as u with no supplementary group.
func dropPrivileges(u *Credential) error {
	// The bounding set first: dropping from it takes CAP_SETPCAP, which the
	// change of uid takes away. A server that is not root cannot drop it;
	// no_new_privs keeps the program from gaining any of it.
	for c := 0; c <= lastCap(); c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil && u != nil {
			return fmt.Errorf("bounding set: %w", err)
		}
	}
	if u != nil {
		// This thread's alone (raw calls, not Go's all-threads setuid): the
		// exec is from it, and the other threads end with the exec.
		for _, call := range []struct {
			nr   uintptr
			args [3]uintptr
		}{
			{unix.SYS_SETGROUPS, [3]uintptr{0, 0, 0}},
			{unix.SYS_SETRESGID, [3]uintptr{uintptr(u.GID), uintptr(u.GID), uintptr(u.GID)}},
			{unix.SYS_SETRESUID, [3]uintptr{uintptr(u.UID), uintptr(u.UID), uintptr(u.UID)}},
		} {
			if _, _, errno := unix.RawSyscall(call.nr, call.args[0], call.args[1], call.args[2]); errno != 0 {
				return fmt.Errorf("user %d:%d: %w", u.UID, u.GID, errno)
			}
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("ambient capabilities: %w", err)
	}
	var none [2]unix.CapUserData
	if err := unix.Capset(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &none[0]); err != nil {
		return fmt.Errorf("capabilities: %w", err)
	}
	return nil
}

// lastCap is the kernel's highest capability number.
func lastCap() int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 40
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 40
	}
	return n
}

// abiConfigs are what each Landlock ABI restricts, index ABI-1. Only the
// file system and the IPC scopes (signals, abstract sockets to processes
// outside) are restricted; the network is not, providers need it.
var abiConfigs = []landlock.Config{landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7}

// landlockRuleset is a ruleset of exactly ABI s.ABI (not best effort: a
// kernel that lacks it fails the run) over s's paths and the system's, and
// the flags to restrict with.
func landlockRuleset(s Spec) (int, uint32, error) {
	abi := min(s.ABI, len(abiConfigs))
	v := abiConfigs[abi-1]
	rules, err := rules(s, abi >= 2)
	if err != nil {
		return -1, 0, err
	}
	cfg := landlock.Config{HandledAccessFS: v.HandledAccessFS, Scoped: v.Scoped}
	if abi >= 7 {
		// The audit log records denials of the program (not of the
		// launcher), so an operator can see which path a layer missed.
		cfg = cfg.EnableLoggingForSubprocesses()
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return -1, 0, err
	}
	if fd < 0 {
		return -1, 0, errors.New("Landlock would restrict nothing")
	}
	return fd, flags, nil
}

// rules are s's paths and the system's. s's paths must exist; the system's
// that this host lacks are left out.
func rules(s Spec, refer bool) ([]landlock.Rule, error) {
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
	dirs := landlock.RWDirs(rw.dirs...)
	if refer {
		// Refer lets a program move files between its own directories
		// (an install into the plugin cache, a download into the work
		// dir); below ABI 2 Landlock refuses every such move.
		dirs = dirs.WithRefer()
	}
	return []landlock.Rule{
		dirs,
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
