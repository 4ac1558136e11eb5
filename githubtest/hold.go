package githubtest

import (
	"net/http"
	"strings"
	"sync"
)

// Hold is a request held before it is served: a test makes a job stop at
// one GitHub call, makes other things happen meanwhile, then lets it go.
type Hold struct {
	method, path string
	reached      chan struct{}
	released     chan struct{}
	once         sync.Once
}

// Reached is closed when the held request arrives.
func (h *Hold) Reached() <-chan struct{} { return h.reached }

// Release serves the held request (and a later one, if none came yet).
func (h *Hold) Release() { h.once.Do(func() { close(h.released) }) }

// HoldNext holds the next request whose method is method and whose path
// ends with path (relative to the API, e.g. "/repos/acme/infra/pulls/2":
// not /pulls/12 nor /pulls/2/files) until the Hold is released; it is then
// served as usual. The test's end releases it.
func (s *Server) HoldNext(method, path string) *Hold {
	h := &Hold{method: method, path: path, reached: make(chan struct{}), released: make(chan struct{})}
	s.mu.Lock()
	s.holds = append(s.holds, h)
	s.mu.Unlock()
	s.t.Cleanup(h.Release)
	return h
}

// waitHold holds r if a Hold matches it.
func (s *Server) waitHold(r *http.Request) {
	s.mu.Lock()
	var hit *Hold
	for i, h := range s.holds {
		if h.method == r.Method && strings.HasSuffix(r.URL.Path, h.path) {
			hit = h
			s.holds = append(s.holds[:i:i], s.holds[i+1:]...)
			break
		}
	}
	s.mu.Unlock()
	if hit == nil {
		return
	}
	close(hit.reached)
	select {
	case <-hit.released:
	case <-r.Context().Done():
	}
}
