//go:build linux

package sandbox

import (
	"encoding/binary"
	"testing"

	seccomp "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// The filter's decisions, run in a BPF interpreter over the system calls a
// program could make: a pid is compared on its low 32 bits, as the kernel
// reads it (upper bits set do not slip past, a pid sharing some of a
// protected one's bits is not refused), groups and broadcasts are refused,
// the truncating read-only open is, and nothing of it applies without its
// guard. The expected actions are literals.
func TestFilterDecidesOnTheKernelsView(t *testing.T) {
	const server, supervisor = 0x1234, 4242
	info, err := arch.GetInfo("")
	if err != nil {
		t.Fatal(err)
	}
	const (
		allow = "allow"
		eperm = "EPERM"
		enosy = "ENOSYS"
	)
	guarded := guards{signals: true, protected: []int{server, supervisor}, truncate: true}
	type call struct {
		name string
		args []uint64
	}
	for _, tc := range []struct {
		g    guards
		call call
		want string
	}{
		{guarded, call{"kill", []uint64{server, 9}}, eperm},
		{guarded, call{"kill", []uint64{server | 1<<32, 9}}, eperm},
		{guarded, call{"kill", []uint64{supervisor | 0xffff<<48, 9}}, eperm},
		{guarded, call{"kill", []uint64{0x1230, 9}}, allow}, // some of the server's bits, another pid
		{guarded, call{"kill", []uint64{0x1235, 9}}, allow},
		{guarded, call{"kill", []uint64{supervisor + 1, 9}}, allow}, // (a thread of its: the hole the report names)
		{guarded, call{"kill", []uint64{0, 9}}, eperm},
		{guarded, call{"kill", []uint64{1 << 32, 9}}, eperm},
		{guarded, call{"kill", []uint64{0xffffffff, 9}}, eperm},         // -1
		{guarded, call{"kill", []uint64{0xffffffffffffedcc, 9}}, eperm}, // -0x1234, the server's group
		{guarded, call{"tgkill", []uint64{server, server, 9}}, eperm},
		{guarded, call{"tgkill", []uint64{supervisor, 77, 9}}, eperm},
		{guarded, call{"tgkill", []uint64{supervisor + 1, supervisor + 1, 9}}, allow},
		{guarded, call{"rt_sigqueueinfo", []uint64{server, 9, 0}}, eperm},
		{guarded, call{"rt_tgsigqueueinfo", []uint64{supervisor | 1<<40, 1, 9, 0}}, eperm},
		{guarded, call{"pidfd_open", []uint64{server, 0}}, eperm},
		{guarded, call{"pidfd_open", []uint64{77, 0}}, allow},
		{guarded, call{"tkill", []uint64{77, 9}}, eperm},
		{guarded, call{"fcntl", []uint64{3, unix.F_SETOWN, server}}, eperm},
		{guarded, call{"fcntl", []uint64{3, unix.F_SETOWN | 1<<32, supervisor | 1<<33}}, eperm},
		{guarded, call{"fcntl", []uint64{3, unix.F_SETOWN, 0xfffffffe}}, eperm}, // a group
		{guarded, call{"fcntl", []uint64{3, unix.F_SETOWN, 77}}, allow},
		{guarded, call{"fcntl", []uint64{3, unix.F_SETOWN_EX, 0}}, eperm},
		{guarded, call{"fcntl", []uint64{3, unix.F_GETFD, 0}}, allow},
		{guarded, call{"ioctl", []uint64{3, 0x8901, 0}}, eperm},
		{guarded, call{"ioctl", []uint64{3, 0x8902 | 1<<32, 0}}, eperm},
		{guarded, call{"ioctl", []uint64{3, unix.TCGETS, 0}}, allow},
		{guarded, call{"truncate", []uint64{0, 0}}, eperm},
		{guarded, call{"ftruncate", []uint64{3, 0}}, allow},
		{guarded, call{"openat", []uint64{0, 0, unix.O_RDONLY | unix.O_TRUNC}}, eperm},
		{guarded, call{"openat", []uint64{0, 0, unix.O_RDONLY | unix.O_TRUNC | unix.O_CREAT | unix.O_CLOEXEC}}, eperm},
		{guarded, call{"openat", []uint64{0, 0, unix.O_WRONLY | unix.O_TRUNC}}, allow},
		{guarded, call{"openat", []uint64{0, 0, unix.O_RDWR | unix.O_TRUNC}}, allow},
		{guarded, call{"openat", []uint64{0, 0, unix.O_RDONLY | unix.O_CLOEXEC}}, allow},
		{guarded, call{"openat2", []uint64{0, 0, 0, 24}}, enosy},
		{guarded, call{"socket", []uint64{unix.AF_PACKET | 1<<32, unix.SOCK_DGRAM, 0}}, eperm},
		{guarded, call{"socket", []uint64{unix.AF_INET, unix.SOCK_STREAM, 0}}, allow},
		{guards{}, call{"kill", []uint64{server, 9}}, allow},
		{guards{}, call{"kill", []uint64{0xffffffff, 9}}, allow},
		{guards{}, call{"tkill", []uint64{77, 9}}, allow},
		{guards{}, call{"truncate", []uint64{0, 0}}, allow},
		{guards{}, call{"openat", []uint64{0, 0, unix.O_RDONLY | unix.O_TRUNC}}, allow},
		{guards{}, call{"openat2", []uint64{0, 0, 0, 24}}, allow},
		{guards{}, call{"socket", []uint64{unix.AF_PACKET, unix.SOCK_DGRAM, 0}}, eperm},
		{guards{}, call{"clone3", []uint64{0, 0}}, enosy},
	} {
		p, err := policy(tc.g)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := p.Assemble()
		if err != nil {
			t.Fatal(err)
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatal(err)
		}
		nr, ok := info.SyscallNames[tc.call.name]
		if !ok {
			t.Fatalf("no %s here", tc.call.name)
		}
		ret, err := vm.Run(seccompData(uint32(nr), uint32(info.ID), tc.call.args))
		if err != nil {
			t.Fatal(err)
		}
		got := map[uint32]string{uint32(seccomp.ActionAllow): allow, uint32(seccomp.ActionErrno) | uint32(unix.EPERM): eperm,
			uint32(seccomp.ActionErrno) | uint32(unix.ENOSYS): enosy}[uint32(ret)]
		if got != tc.want {
			t.Errorf("signals %v truncate %v: %s%#x gave %q (%#x), want %q", tc.g.signals, tc.g.truncate, tc.call.name, tc.call.args, got, ret, tc.want)
		}
	}
}

// seccompData is struct seccomp_data as the filter reads it on this
// (little-endian) host. The interpreter loads words big-endian, so each
// 32-bit word is written big-endian at the offset where the kernel has it.
func seccompData(nr, archID uint32, args []uint64) []byte {
	b := make([]byte, 64)
	binary.BigEndian.PutUint32(b[0:], nr)
	binary.BigEndian.PutUint32(b[4:], archID)
	for i, a := range args {
		binary.BigEndian.PutUint32(b[16+8*i:], uint32(a))
		binary.BigEndian.PutUint32(b[16+8*i+4:], uint32(a>>32))
	}
	return b
}
