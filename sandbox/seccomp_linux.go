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

// policy refuses (EPERM) the calls above, packet and raw sockets, device
// nodes and new namespaces; clone3 gets ENOSYS, whose flags a filter cannot
// read: the C library and Go then use clone, whose flags it can.
func policy() (seccomp.Policy, error) {
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
		cond("socket", seccomp.Condition{Argument: 0, Operation: seccomp.Equal, Value: unix.AF_PACKET}),
		// SOCK_RAW is 3: both low bits set (STREAM 1, DGRAM 2, SEQPACKET 5 are not).
		cond("socket", bits(1, 1), bits(1, 2)),
		cond("clone", bits(0, namespaceFlags)),
		cond("mknodat", bits(2, deviceBit)),
	}
	if _, ok := info.SyscallNames["mknod"]; ok {
		withArgs = append(withArgs, cond("mknod", bits(1, deviceBit)))
	}
	return seccomp.Policy{
		DefaultAction: seccomp.ActionAllow,
		Syscalls: []seccomp.SyscallGroup{
			{Names: names, NamesWithCondtions: withArgs, Action: seccomp.ActionErrno},
			{Names: []string{"clone3"}, Action: seccomp.ActionErrno | seccomp.Action(unix.ENOSYS)},
		},
	}, nil
}

// loadFilter loads the policy on this thread (no_new_privs is set), after
// a filter that kills a process calling the kernel through another
// architecture's entry (32-bit calls on x86-64): their numbers differ, and
// the policy's checks would miss them.
func loadFilter() error {
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
	p, err := policy()
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
