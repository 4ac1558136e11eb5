package githubtest

import (
	"net/http"
	"strings"
)

// fault answers the next matching request with an error instead of serving it.
type fault struct {
	method, path string
	status       int
}

// FailNext makes the next request whose method is method ("" for any) and
// whose path contains path (relative to the server, e.g.
// "/repos/acme/infra/git/ref/heads/main") fail with status and a GitHub-style
// error body, without being served. Faults queue up: each fails one request,
// in the order they were added. Failed lists the requests they failed.
func (s *Server) FailNext(method, path string, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, fault{method: method, path: path, status: status})
}

// Failed returns the requests failed by FailNext so far, in order.
func (s *Server) Failed() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.failed...)
}

// injectFault fails r if a fault matches it, and reports whether it did.
func (s *Server) injectFault(w http.ResponseWriter, r *http.Request) bool {
	s.mu.Lock()
	status := 0
	for i, f := range s.faults {
		if (f.method == "" || f.method == r.Method) && strings.Contains(r.URL.Path, f.path) {
			status = f.status
			s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
			s.failed = append(s.failed, Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery})
			break
		}
	}
	s.mu.Unlock()
	if status == 0 {
		return false
	}
	writeJSON(w, status, ghError(http.StatusText(status)+" (injected by githubtest.FailNext)"))
	return true
}
