//go:build linux

// Package sandboxtest plays a pull request's program against the sandbox:
// each attack of the security issue, as a test's confined program or a
// provisioner runs it (./attacker), says how it went.
package sandboxtest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Attack tries one attack, "op" or "op:arg", and says "ok" (it worked),
// "EACCES", "EPERM" or the error. The attacks: read, write and truncate
// of a path; creds (what the program holds); packet-socket, raw-socket;
// mknod of a block device at a path; mount on a dir; unshare; userns;
// ptrace and signal (0: only the check) of a pid ("parent": the
// supervisor); bpf; bind of a port; chown of a path to root; link-flags
// (the loopback's flags set to what they are).
func Attack(p string) string {
	op, arg, _ := strings.Cut(p, ":")
	var err error
	switch op {
	case "read":
		_, err = os.ReadFile(arg)
	case "write":
		err = os.WriteFile(arg, []byte("written by the probe"), 0o600)
	case "truncate":
		err = os.Truncate(arg, 0)
	case "creds": // what the program holds (its /proc/self/status is not in reach)
		return creds()
	case "packet-socket": // sniff every frame of the host's interfaces
		err = closeFD(unix.Socket(unix.AF_PACKET, unix.SOCK_RAW, 0x0300)) // ETH_P_ALL, big-endian
	case "raw-socket":
		err = closeFD(unix.Socket(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_TCP))
	case "mknod": // a block device: the disk, under Landlock's nose
		err = unix.Mknod(arg, unix.S_IFBLK|0o600, int(unix.Mkdev(8, 0)))
	case "mount":
		err = unix.Mount("none", arg, "tmpfs", 0, "")
		if err == nil {
			_ = unix.Unmount(arg, unix.MNT_DETACH)
		}
	case "unshare": // a namespace of its own (on this thread, which it then gives up)
		runtime.LockOSThread()
		err = unix.Unshare(unix.CLONE_NEWUTS)
	case "userns": // a child in a user namespace, in which it would hold every capability
		cmd := exec.Command("/bin/true")
		cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWUSER}
		err = cmd.Run()
	case "ptrace":
		pid, _ := strconv.Atoi(arg)
		// Seize, unlike attach, does not stop the process: an attack that
		// works leaves its target running.
		err = unix.PtraceSeize(pid)
		if err == nil {
			_ = unix.PtraceDetach(pid)
		}
	case "bpf": // an array map: the first step of any BPF program
		attr := [5]uint32{2, 4, 4, 1} // BPF_MAP_TYPE_ARRAY, key 4, value 4, 1 entry
		fd, _, errno := unix.Syscall(unix.SYS_BPF, 0, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr))
		if errno != 0 {
			err = errno
		} else {
			unix.Close(int(fd))
		}
	case "bind": // a privileged port
		var ln net.Listener
		if ln, err = net.Listen("tcp", "127.0.0.1:"+arg); err == nil {
			ln.Close()
		}
	case "chown":
		err = os.Chown(arg, 0, 0)
	case "link-flags": // set the loopback's flags to what they are: no change, but only an administrator may
		err = setLoopbackFlags()
	case "signal": // signal 0: the permission check without a signal
		pid, _ := strconv.Atoi(arg)
		if arg == "parent" { // the supervisor
			if pid = os.Getppid(); pid == 0 {
				return "no such process" // outside its PID namespace: it cannot name it
			}
		}
		err = unix.Kill(pid, 0)
	default:
		return "unknown attack " + op
	}
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, syscall.EACCES):
		return "EACCES"
	case errors.Is(err, syscall.EPERM):
		return "EPERM"
	}
	return err.Error()
}

func closeFD(fd int, err error) error {
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func setLoopbackFlags() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}

// creds says the program's capability sets (effective, permitted,
// inheritable; how many of the bounding and ambient sets), no_new_privs,
// its seccomp mode and its uids.
func creds() string {
	var data [2]unix.CapUserData
	if err := unix.Capget(&unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}, &data[0]); err != nil {
		return err.Error()
	}
	bounding, ambient := 0, 0
	for c := 0; c < 64; c++ { // past the kernel's last, both answer EINVAL
		if r, _ := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); r == 1 {
			bounding++
		}
		if r, _ := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); r == 1 {
			ambient++
		}
	}
	nnp, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	mode, _ := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0)
	r, e, s := unix.Getresuid()
	return fmt.Sprintf("eff=%x prm=%x inh=%x bounding=%d ambient=%d no_new_privs=%d seccomp=%d uid=%d,%d,%d",
		uint64(data[1].Effective)<<32|uint64(data[0].Effective), uint64(data[1].Permitted)<<32|uint64(data[0].Permitted),
		uint64(data[1].Inheritable)<<32|uint64(data[0].Inheritable), bounding, ambient, nnp, mode, r, e, s)
}
