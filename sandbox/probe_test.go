//go:build linux

package sandbox

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probesEnv makes the test binary a probe: run as the confined program, it
// tries each probe and prints one line per probe, "ok" or the error.
// daemonEnv makes it a daemon: it writes its pid to the file named and
// sleeps.
// serverEnv makes it a server: it starts the launcher with the Spec it
// holds, itself as the parent, and waits.
const (
	probesEnv = "SANDBOX_TEST_PROBES"
	daemonEnv = "SANDBOX_TEST_DAEMON"
	serverEnv = "SANDBOX_TEST_SERVER"
)

func TestMain(m *testing.M) {
	if _, ok := os.LookupEnv(daemonEnv); ok {
		fmt.Println(os.Getpid())
		time.Sleep(time.Hour)
		os.Exit(0)
	}
	if raw, ok := os.LookupEnv(serverEnv); ok {
		os.Unsetenv(serverEnv)
		os.Exit(serve(raw))
	}
	if probes, ok := os.LookupEnv(probesEnv); ok {
		for _, p := range strings.Split(probes, "\n") {
			fmt.Printf("%s -> %s\n", p, probe(p))
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// probe plays one attack of a pull request's program and says how it went.
func probe(p string) string {
	op, arg, _ := strings.Cut(p, ":")
	var err error
	switch op {
	case "read":
		_, err = os.ReadFile(arg)
	case "write":
		err = os.WriteFile(arg, []byte("written by the probe"), 0o600)
	case "truncate":
		err = os.Truncate(arg, 0)
	case "env":
		v, ok := os.LookupEnv(arg)
		if !ok {
			return "unset"
		}
		return "set to " + v
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
		err = unix.PtraceAttach(pid)
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
	case "hang": // a run that goes on until something ends it
		fmt.Println("hang -> running")
		time.Sleep(time.Hour)
	case "daemon": // a double-forked, setsid daemon that writes its pid to arg
		self, _ := os.Executable()
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), daemonEnv+"="+arg)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		var out io.ReadCloser
		if out, err = cmd.StdoutPipe(); err == nil {
			if err = cmd.Start(); err == nil {
				// Its pid line says it runs; the probe then exits at once.
				pid, _ := bufio.NewReader(out).ReadString('\n')
				err = os.WriteFile(arg, []byte(strings.TrimSpace(pid)), 0o644)
			}
		}
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
	for c := 0; c <= lastCap(); c++ {
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

// serve plays the server: it runs the launcher with the Spec in raw, as
// its parent, and waits for it.
func serve(raw string) int {
	var s Spec
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		fmt.Println(err)
		return 2
	}
	s.Parent = os.Getpid()
	name, value := s.Variable()
	cmd := exec.Command(s.Program)
	cmd.Env = append(os.Environ(), name+"="+value)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Println(err)
		return 1
	}
	return 0
}
