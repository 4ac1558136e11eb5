//go:build linux

package sandbox

import (
	"fmt"
	"unsafe"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// refused are the system calls Terraform, its providers and the programs
// they run never need, and with which a program could administer the host,
// escape the other confinements or spy on other processes. Most need a
// capability the program no longer holds; the filter refuses them whatever
// it holds. Names this architecture lacks (iopl on arm64) are left out.
var refused = []string{
	// file systems and namespaces
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
	"name_to_handle_at", "open_by_handle_at",
	// other processes
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "kcmp",
	// the kernel
	"bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter", "io_uring_register",
	"keyctl", "add_key", "request_key",
	"init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load",
	"reboot", "swapon", "swapoff", "acct", "quotactl", "syslog", "vhangup", "lookup_dcookie",
	// the clock and the hardware
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "iopl", "ioperm",
}

// Bits of arguments the filter looks at.
const (
	namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
		unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET
	// S_IFCHR's bit is set in S_IFCHR and S_IFBLK, and in no file type
	// mknod makes otherwise (regular files, fifos, sockets).
	deviceBit = unix.S_IFCHR
)

// guards are the filter's refusals that only some hosts need: where
// Landlock and a separate uid do not already keep the promise.
type guards struct {
	// signals refuses signals (and SIGIO ownership) aimed at the
	// protected pids, at process groups and at every process: below
	// Landlock ABI 6 as the server's uid.
	signals   bool
	protected []int
	// truncate refuses truncate(2) by path and a read-only open that
	// truncates: below Landlock ABI 3, which checks neither, as the
	// server's uid.
	truncate bool
}

// Argument values the guards look at.
const (
	fSetOwn    = 8      // F_SETOWN
	fSetOwnEx  = 15     // F_SETOWN_EX
	fioSetOwn  = 0x8901 // FIOSETOWN
	siocSPGRP  = 0x8902 // SIOCSPGRP
	signBit    = 0x80000000
	low32Mask  = 0xffffffff
	writeModes = unix.O_WRONLY | unix.O_RDWR
)

// low32Is matches an argument whose low 32 bits are v. pid_t, int and
// unsigned int arguments are 32-bit: the kernel ignores the register's
// upper half, which a plain 64-bit comparison would let a program fill to
// slip past. The library's BitsSet is "any of these bits", so each bit of
// v is its own condition, and BitsNotSet rules out every other low bit.
func low32Is(arg uint32, v uint32) []seccomp.Condition {
	var cs []seccomp.Condition
	for b := uint32(1); b != 0; b <<= 1 {
		if v&b != 0 {
			cs = append(cs, seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: uint64(b)})
		}
	}
	return append(cs, seccomp.Condition{Argument: arg, Operation: seccomp.BitsNotSet, Value: uint64(^v & low32Mask)})
}

// negative matches a 32-bit argument below zero: a process group, or -1
// (every process the caller may signal).
func negative(arg uint32) seccomp.Condition {
	return seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: signBit}
}

// signalRules refuse kill and its kin aimed at a protected pid; kill of
// 0 (the caller's process group, which the supervisor's can be), of a
// negative pid (a group) and -1 (everyone); tkill, whose thread id could
// be any of the server's; and SIGIO ownership (F_SETOWN, F_SETOWN_EX,
// FIOSETOWN, SIOCSPGRP) that would have the kernel signal them.
func signalRules(protected []int) (names []string, withArgs []seccomp.NameWithConditions) {
	cond := func(name string, cs ...seccomp.Condition) seccomp.NameWithConditions {
		return seccomp.NameWithConditions{Name: name, Conditions: cs}
	}
	withArgs = append(withArgs, cond("kill", low32Is(0, 0)...), cond("kill", negative(0)),
		cond("fcntl", append(low32Is(1, fSetOwn), negative(2))...),
		cond("fcntl", low32Is(1, fSetOwnEx)...),
		cond("ioctl", low32Is(1, fioSetOwn)...), cond("ioctl", low32Is(1, siocSPGRP)...))
	for _, p := range protected {
		pid := uint32(p)
		for _, name := range []string{"kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "pidfd_open"} {
			withArgs = append(withArgs, cond(name, low32Is(0, pid)...))
		}
		withArgs = append(withArgs, cond("fcntl", append(low32Is(1, fSetOwn), low32Is(2, pid)...)...))
	}
	return []string{"tkill"}, withArgs
}

// truncateRules refuse truncate(2) by path and an open that truncates a
// file opened read-only (Linux truncates then; Landlock below ABI 3 checks
// only the read). ftruncate and O_TRUNC with write access need the write
// right, which Landlock checks at every ABI.
func truncateRules(info *arch.Info) (names []string, withArgs []seccomp.NameWithConditions) {
	readOnlyTrunc := func(name string, arg uint32) seccomp.NameWithConditions {
		return seccomp.NameWithConditions{Name: name, Conditions: []seccomp.Condition{
			{Argument: arg, Operation: seccomp.BitsSet, Value: unix.O_TRUNC},
			{Argument: arg, Operation: seccomp.BitsNotSet, Value: writeModes},
		}}
	}
	withArgs = append(withArgs, readOnlyTrunc("openat", 2))
	if _, ok := info.SyscallNames["open"]; ok { // not on arm64
		withArgs = append(withArgs, readOnlyTrunc("open", 1))
	}
	return []string{"truncate"}, withArgs
}

// policy refuses (EPERM) the calls above, packet and raw sockets, device
// nodes and new namespaces, and what g asks; clone3 gets ENOSYS, whose
// flags a filter cannot read: the C library and Go then use clone, whose
// flags it can. So does openat2 under the truncate guard: its flags are
// in a struct the filter cannot read, and Go and the C library fall back
// to openat.
func policy(g guards) (seccomp.Policy, error) {
	info, err := arch.GetInfo("")
	if err != nil {
		return seccomp.Policy{}, err
	}
	var names []string
	for _, n := range refused {
		if _, ok := info.SyscallNames[n]; ok {
			names = append(names, n)
		}
	}
	cond := func(name string, cs ...seccomp.Condition) seccomp.NameWithConditions {
		return seccomp.NameWithConditions{Name: name, Conditions: cs}
	}
	bits := func(arg uint32, v uint64) seccomp.Condition {
		return seccomp.Condition{Argument: arg, Operation: seccomp.BitsSet, Value: v}
	}
	withArgs := []seccomp.NameWithConditions{
		// The family is an int: compared on its low 32 bits alone.
		cond("socket", low32Is(0, unix.AF_PACKET)...),
		// SOCK_RAW is 3: both low bits set (STREAM 1, DGRAM 2, SEQPACKET 5 are not).
		cond("socket", bits(1, 1), bits(1, 2)),
		cond("clone", bits(0, namespaceFlags)),
		cond("mknodat", bits(2, deviceBit)),
	}
	if _, ok := info.SyscallNames["mknod"]; ok {
		withArgs = append(withArgs, cond("mknod", bits(1, deviceBit)))
	}
	enosys := []string{"clone3"}
	if g.signals {
		n, w := signalRules(g.protected)
		names, withArgs = append(names, n...), append(withArgs, w...)
	}
	if g.truncate {
		n, w := truncateRules(info)
		names, withArgs = append(names, n...), append(withArgs, w...)
		enosys = append(enosys, "openat2")
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Names: names, NamesWithCondtions: withArgs, Action: seccomp.ActionErrno},
			{Names: enosys, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
		},
	}, nil
}

// loadFilter loads the policy on this thread (no_new_privs is set), after
// a filter that kills a process calling the kernel through another
// architecture's entry (32-bit calls on x86-64): their numbers differ, and
// the policy's checks would miss them.
func loadFilter(g guards) error {
	info, err := arch.GetInfo("")
	if err != nil {
		return err
	}
	if err := loadProgram([]bpf.Instruction{
		bpf.LoadAbsolute{Off: 4, Size: 4}, // seccomp_data.arch
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: uint32(seccomp.ActionKillProcess)},
		bpf.RetConstant{Val: uint32(seccomp.ActionAllow)},
	}); err != nil {
		return fmt.Errorf("architecture filter: %w", err)
	}
	p, err := policy(g)
	if err != nil {
		return err
	}
	return seccomp.LoadFilter(seccomp.Filter{NoNewPrivs: true, Policy: p})
}

func loadProgram(prog []bpf.Instruction) error {
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return err
	}
	filters := make([]unix.SockFilter, len(raw))
	for i, r := range raw {
		filters[i] = unix.SockFilter{Code: r.Op, Jt: r.Jt, Jf: r.Jf, K: r.K}
	}
	fprog := unix.SockFprog{Len: uint16(len(filters)), Filter: &filters[0]}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		return errno
	}
	return nil
}
