package githubtest

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// rateLimit is what an installation may send in an hour, on GitHub.
const rateLimit = 5000

// rateWindow is the installation's primary rate limit: the REST requests
// made with an installation token count; the App's own (JWT) requests,
// GraphQL and archive downloads do not.
type rateWindow struct {
	used int
	// reset ends the window. Zero for a window from SetRateLimit that is
	// not used up yet: it ends resetDelay after it is.
	reset      time.Time
	resetDelay time.Duration
}

// SetClock measures the rate limits' windows and resets on now instead of
// the wall clock (time.Now), so that a test moves its clock past a reset
// rather than waiting it out. The X-RateLimit-Reset headers are on that
// clock too: a client that waits for them must use the same one.
func (s *Server) SetClock(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.clock = now
}

// SetHourlyRateLimit makes the installation's primary limit n requests an
// hour instead of 5000: GitHub raises an installation's limit with its
// repositories and users, up to 12,500, and sets 15,000 on Enterprise
// Cloud. A benchmark that measures something else sets it out of its way.
func (s *Server) SetHourlyRateLimit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hourly = n
}

// RateLimitUsed is how many requests the installation has used in its
// current window (an hour from its first, unless SetRateLimit said
// otherwise).
func (s *Server) RateLimitUsed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rate.used
}

// installationLimit is the installation's requests an hour. Callers hold
// s.mu.
func (s *Server) installationLimit() int {
	if s.hourly > 0 {
		return s.hourly
	}
	return rateLimit
}

// SetRateLimit leaves the installation n more requests in the current
// window. Once they are used, every request is refused as GitHub refuses
// requests over its primary rate limit (403, x-ratelimit-remaining: 0, "API
// rate limit exceeded for installation ID ...") until the reset, resetAfter
// after the last one, rounded up to a whole second as x-ratelimit-reset is.
// Then the usual 5000 an hour apply again. n = 0 exhausts the limit now.
func (s *Server) SetRateLimit(n int, resetAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rate = rateWindow{used: s.installationLimit() - min(max(n, 0), s.installationLimit()), resetDelay: resetAfter}
	if n <= 0 {
		s.rate.reset = ceilSecond(s.clock().Add(resetAfter))
	}
}

// ExhaustRateLimitBefore makes the installation's primary limit run out
// just before the next request matching method and path (as in FailNext),
// as if other clients of the installation had used it up: that request, and
// every other one until the reset resetAfter later, is refused.
func (s *Server) ExhaustRateLimitBefore(method, path string, resetAfter time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exhaust = append(s.exhaust, exhaustion{method: method, path: path, resetAfter: resetAfter})
}

// exhaustion is a primary limit that runs out at a request.
type exhaustion struct {
	method, path string
	resetAfter   time.Duration
}

// Limited returns the requests refused for a rate limit, primary or
// secondary, in order. They were not performed.
func (s *Server) Limited() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.limited...)
}

// countRequest counts r against the primary limit, sets the
// X-RateLimit-* headers and reports whether r is over the limit. Callers
// hold s.mu.
func (s *Server) countRequest(h http.Header, r *http.Request) (over bool) {
	if login := s.userOf(r); login != "" {
		return s.countUserRequest(h, login)
	}
	now := s.clock()
	w := &s.rate
	limit := s.installationLimit()
	if !w.reset.IsZero() && !now.Before(w.reset) {
		*w = rateWindow{reset: ceilSecond(now.Add(time.Hour))}
	}
	if counted(r) {
		for i, x := range s.exhaust {
			if (x.method == "" || x.method == r.Method) && strings.Contains(r.URL.Path, x.path) {
				s.exhaust = append(s.exhaust[:i:i], s.exhaust[i+1:]...)
				*w = rateWindow{used: limit, reset: ceilSecond(now.Add(x.resetAfter))}
				break
			}
		}
		over = w.used >= limit
		if !over {
			w.used++
		}
		if w.used >= limit && w.reset.IsZero() {
			w.reset = ceilSecond(now.Add(w.resetDelay))
		}
	}
	reset := w.reset
	if reset.IsZero() {
		reset = ceilSecond(now.Add(w.resetDelay))
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(limit-w.used))
	h.Set("X-RateLimit-Used", strconv.Itoa(w.used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	return over
}

// counted reports whether r counts against the installation's limit: a
// REST request with an installation token.
func counted(r *http.Request) bool {
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	return strings.HasPrefix(r.URL.Path, "/api/v3/") && strings.HasPrefix(cred, "ghs_")
}

// refuseOverLimit answers a request over the primary limit as GitHub does.
func (s *Server) refuseOverLimit(w http.ResponseWriter) {
	writeJSON(w, http.StatusForbidden, map[string]any{
		"message":           fmt.Sprintf("API rate limit exceeded for installation ID %d. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.", s.installationID),
		"documentation_url": "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-primary-rate-limits",
	})
}

// refuseSecondary answers a request over a secondary limit as GitHub does.
func refuseSecondary(w http.ResponseWriter, retryAfter int) {
	w.Header().Set("Retry-After", strconv.Itoa(retryAfter))
	writeJSON(w, http.StatusForbidden, map[string]any{
		"message":           "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000.",
		"documentation_url": "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits",
	})
}

func ceilSecond(t time.Time) time.Time {
	if c := t.Truncate(time.Second); !c.Equal(t) {
		return c.Add(time.Second)
	}
	return t
}
