//go:build linux

package sandbox

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	seccomp "github.com/elastic/go-seccomp-bpf"
	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// Detect asks the kernel what it gives and decides what keeps each promise.
func Detect(s Settings) Report {
	return Protect(facts(), s)
}

func facts() Facts {
	f := Facts{Linux: true, KernelABI: kernelABI(), Seccomp: seccomp.Supported(), UID: os.Geteuid()}
	caps := effectiveCaps()
	f.Root = f.UID == 0 && caps&(1<<unix.CAP_SETUID) != 0 && caps&(1<<unix.CAP_SETGID) != 0
	f.SysAdmin = caps&(1<<unix.CAP_SYS_ADMIN) != 0
	return f
}

func kernelABI() int {
	v, err := llsyscall.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

// effectiveCaps is this process's effective capability set (CapEff of
// /proc/self/status); none when it cannot be read.
func effectiveCaps() uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "CapEff:"); ok {
			caps, _ := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			return caps
		}
	}
	return 0
}
