package childproc

import "syscall"

// Attr puts the child in its own process group, so that killing the group
// kills whatever it started too, and has the kernel kill it when the
// server dies.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// LimitMemory bounds the calling process's heap: Go maps its heap as
// private writable memory, which RLIMIT_DATA counts, so a child that needs
// more dies in its own process, saying so (OutOfMemory).
func LimitMemory(bytes uint64) error {
	return syscall.Setrlimit(syscall.RLIMIT_DATA, &syscall.Rlimit{Cur: bytes, Max: bytes})
}
