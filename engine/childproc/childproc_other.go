//go:build unix && !linux

package childproc

import "syscall"

// Attr puts the child in its own process group, so that killing the group
// kills whatever it started too. Only Linux kills it with the server.
func Attr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// LimitMemory does nothing: the heap is bounded on Linux only.
func LimitMemory(uint64) error { return nil }
