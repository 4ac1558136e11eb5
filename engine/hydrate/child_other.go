//go:build unix && !linux

package hydrate

import "syscall"

// procAttr puts the build in its own process group, so that killing it
// kills git too. Only Linux kills it with the server.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// limitMemory does nothing: the heap is bounded on Linux only.
func limitMemory(uint64) error { return nil }
