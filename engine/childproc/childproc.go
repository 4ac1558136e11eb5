// Package childproc holds what the engine's child processes share: the
// strata binary started again to do one piece of a PR's work (a kustomize
// build, a Helm action) where it can be killed, since those libraries
// take no context. The child is put in its own process group, killed with
// the server on Linux, and its heap is bounded there.
package childproc

import (
	"bytes"
	"regexp"
)

// HeadBuffer keeps the first Max bytes written to it: a crash says its
// cause first (Go's "fatal error: runtime: out of memory").
type HeadBuffer struct {
	Max int
	buf bytes.Buffer
}

func (h *HeadBuffer) Write(p []byte) (int, error) {
	if room := h.Max - h.buf.Len(); room > 0 {
		h.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (h *HeadBuffer) String() string { return h.buf.String() }

// outOfMemory matches the fatal errors Go's runtime dies with when the
// heap's bound refuses it memory: "out of memory" from the heap,
// "cannot allocate memory" from the runtime's own metadata
// (persistentalloc), and ENOMEM (errno=12) when a new thread's stack
// cannot be mapped. Which one comes depends on what was allocating at
// the moment, so the build or test that overran says the same either way.
var outOfMemory = regexp.MustCompile(`out of memory|cannot allocate memory|failed to create new OS thread \(have \d+ already; errno=12\)`)

// OutOfMemory reports whether a child's stderr (its head, from a
// HeadBuffer) says it died for want of memory.
func OutOfMemory(stderr string) bool { return outOfMemory.MatchString(stderr) }
