// Package childproc holds what the engine's child processes share: the
// strata binary started again to do one piece of a PR's work (a kustomize
// build, a Helm action) where it can be killed, since those libraries
// take no context. The child is put in its own process group, killed with
// the server on Linux, and its heap is bounded there.
package childproc

import "bytes"

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
