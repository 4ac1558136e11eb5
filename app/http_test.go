package app

import (
	"net/http"
	"testing"
	"time"
)

// Every phase of a connection is bounded, so slow clients cannot hold
// connections forever; the write timeout leaves room to write a long log.
func TestHTTPServerTimeouts(t *testing.T) {
	s := newHTTPServer(http.NotFoundHandler())
	for name, d := range map[string]time.Duration{
		"ReadHeaderTimeout": s.ReadHeaderTimeout, "ReadTimeout": s.ReadTimeout,
		"WriteTimeout": s.WriteTimeout, "IdleTimeout": s.IdleTimeout,
	} {
		if d <= 0 || d > 5*time.Minute {
			t.Errorf("%s = %s, want set and at most 5m", name, d)
		}
	}
	if s.ReadHeaderTimeout > s.ReadTimeout || s.WriteTimeout < s.ReadTimeout {
		t.Errorf("headers %s, request %s, answer %s: want headers <= request <= answer", s.ReadHeaderTimeout, s.ReadTimeout, s.WriteTimeout)
	}
}
