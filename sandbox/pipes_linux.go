//go:build linux

package sandbox

import "golang.org/x/sys/unix"

// outputPipeSize is the pipe buffer the program's output gets: Terraform
// prints a plan's whole text at once after computing it (tens of MB for a
// large plan), and with the kernel's default 64 KiB it stops every 64 KiB
// until the server has read, masked and stored what came before. A larger
// buffer lets it print on while the server catches up. 1 MiB is what an
// unprivileged process may ask for (/proc/sys/fs/pipe-max-size).
const outputPipeSize = 1 << 20

// widenOutput enlarges the pipes on stdout and stderr, which the program
// inherits. Best effort: not a pipe (a file, a terminal), or a kernel
// that refuses the size, leaves the output as it was.
func widenOutput() {
	for _, fd := range []int{1, 2} {
		unix.FcntlInt(uintptr(fd), unix.F_SETPIPE_SZ, outputPipeSize)
	}
}
