package githubtest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
)

// fault answers the next matching request with an error instead of serving it.
type fault struct {
	method, path string
	body         []string // substrings the body must contain
	status       int
	// retryAfter >= 0 makes the fault a secondary rate limit.
	retryAfter int
}

// FailNext makes the next request whose method is method ("" for any),
// whose path contains path (relative to the server, e.g.
// "/repos/acme/infra/git/ref/heads/main") and whose body contains each of
// body (say `"name":"strata/plan: infra/network"`, to pick one of several
// check runs created) fail with status and a GitHub-style error body,
// without being served. Faults queue up: each fails one request, in the
// order they were added. Failed lists the requests they failed.
func (s *Server) FailNext(method, path string, status int, body ...string) {
	s.addFault(fault{method: method, path: path, body: body, status: status, retryAfter: -1})
}

// SecondaryLimitNext makes the next request matching method, path and body
// (as in FailNext) hit a secondary rate limit: GitHub's 403 with
// Retry-After: retryAfter seconds and "You have exceeded a secondary rate
// limit", without being performed. It queues with FailNext's faults;
// Limited lists the requests it refused.
func (s *Server) SecondaryLimitNext(method, path string, retryAfter int, body ...string) {
	s.addFault(fault{method: method, path: path, body: body, status: http.StatusForbidden, retryAfter: max(retryAfter, 0)})
}

func (s *Server) addFault(f fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults = append(s.faults, f)
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
	var hit *fault
	var raw []byte
	for i, f := range s.faults {
		if (f.method != "" && f.method != r.Method) || !strings.Contains(r.URL.Path, f.path) {
			continue
		}
		if len(f.body) > 0 && raw == nil {
			raw, _ = io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(raw)) // still served when no fault matches
		}
		if !containsAll(raw, f.body) {
			continue
		}
		hit = &f
		s.faults = append(s.faults[:i:i], s.faults[i+1:]...)
		req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery}
		if f.retryAfter >= 0 {
			s.limited = append(s.limited, req)
		} else {
			s.failed = append(s.failed, req)
		}
		break
	}
	s.mu.Unlock()
	switch {
	case hit == nil:
		return false
	case hit.retryAfter >= 0:
		refuseSecondary(w, hit.retryAfter)
	default:
		writeJSON(w, hit.status, ghError(http.StatusText(hit.status)+" (injected by githubtest.FailNext)"))
	}
	return true
}

func containsAll(body []byte, parts []string) bool {
	for _, p := range parts {
		if !bytes.Contains(body, []byte(p)) {
			return false
		}
	}
	return true
}
