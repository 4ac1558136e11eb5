package hydrate

import "syscall"

// procAttr puts the build in its own process group, so that killing it
// kills git too, and has the kernel kill it when the server dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// limitMemory bounds the build's heap: Go maps its heap as private
// writable memory, which RLIMIT_DATA counts, so a build that needs more
// dies with "out of memory" in its own process.
func limitMemory(bytes uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: bytes, Max: bytes})
}
