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
// supervisor), and the signal guard's attacks on a pid: kill (SIGKILL),
// signal-group, signal-high, tgkill, pidfd, setown; signal-all,
// signal-own-group, signal-thread; truncate-open of a path; kill-child
// (the control: a program ends its own child); bpf; bind of a port; chown of a path to root; link-flags
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
		pid, ok := target(arg)
		if !ok {
			return "no such process" // outside its PID namespace: it cannot name it
		}
		err = unix.Kill(pid, 0)
	case "kill": // SIGKILL, for real
		pid, ok := target(arg)
		if !ok {
			return "no such process"
		}
		err = unix.Kill(pid, unix.SIGKILL)
	case "signal-group": // signal 0 to the process group of a pid: kill(-pgid)
		pid, ok := target(arg)
		if !ok {
			return "no such process"
		}
		pgid, gerr := unix.Getpgid(pid)
		if gerr != nil {
			return gerr.Error()
		}
		err = unix.Kill(-pgid, 0)
	case "signal-all": // kill(-1): every process the caller may signal
		err = unix.Kill(-1, 0)
	case "signal-own-group": // kill(0): the caller's process group
		err = unix.Kill(0, 0)
	case "signal-high": // the pid with the register's upper half set, which the kernel ignores
		pid, ok := target(arg)
		if !ok {
			return "no such process"
		}
		err = rawErr(unix.RawSyscall(unix.SYS_KILL, uintptr(uint64(pid)|1<<32), 0, 0))
	case "tgkill":
		pid, ok := target(arg)
		if !ok {
			return "no such process"
		}
		err = unix.Tgkill(pid, pid, 0)
	case "pidfd": // pidfd_open, then pidfd_send_signal
		pid, ok := target(arg)
		if !ok {
			return "no such process"
		}
		fd, perr := unix.PidfdOpen(pid, 0)
		if perr != nil {
			err = perr
			break
		}
		err = unix.PidfdSendSignal(fd, 0, nil, 0)
		unix.Close(fd)
	case "signal-thread": // signal 0 to a thread of a process: kill(2) takes a thread's id and signals its process
		err = signalThread(arg)
	case "setown": // F_SETOWN: the kernel then sends SIGIO to the pid
		pid, ok := target(arg)
		if !ok {
			return "no such process"
		}
		var p [2]int
		if err = unix.Pipe(p[:]); err == nil {
			_, err = unix.FcntlInt(uintptr(p[0]), unix.F_SETOWN, pid)
			unix.Close(p[0])
			unix.Close(p[1])
		}
	case "truncate-open": // open(O_RDONLY|O_TRUNC): Linux truncates a file opened to be read
		var fd int
		if fd, err = unix.Open(arg, unix.O_RDONLY|unix.O_TRUNC, 0); err == nil {
			unix.Close(fd)
		}
	case "kill-child": // the program's own child: a program may end what it started
		cmd := exec.Command("/bin/sleep", "60")
		if err = cmd.Start(); err == nil {
			err = unix.Kill(cmd.Process.Pid, unix.SIGKILL)
			_ = cmd.Wait()
		}
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

// target is the pid an attack names: a number, or "parent" (the
// supervisor; false when the program cannot name it, outside its PID
// namespace).
func target(arg string) (int, bool) {
	if arg == "parent" {
		pid := os.Getppid()
		return pid, pid != 0
	}
	pid, _ := strconv.Atoi(arg)
	return pid, true
}

// signalThread signals (0) the first thread of the supervisor ("parent")
// or of the server (its pid) found without /proc, which Landlock keeps out
// of reach: a Go process starts its threads right after itself, so the
// supervisor's ids lie between its pid and this program's, the server's
// between its pid and the supervisor's.
func signalThread(arg string) error {
	from, to := os.Getppid(), os.Getpid()
	if arg != "parent" {
		from, _ = strconv.Atoi(arg)
		to = os.Getppid()
	}
	// Other users' processes may have taken ids in between: past them.
	err := error(syscall.ESRCH)
	for tid := from + 1; tid < to; tid++ {
		if e := unix.Kill(tid, 0); e == nil {
			return nil
		} else if !errors.Is(e, syscall.ESRCH) {
			err = e
		}
	}
	return err
}

func rawErr(_, _ uintptr, errno syscall.Errno) error {
	if errno != 0 {
		return errno
	}
	return nil
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
