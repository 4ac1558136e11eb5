package ghretry

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Reason is why a request was retried, or refused.
type Reason string

const (
	// SecondaryRateLimit: GitHub answered 403 or 429 with Retry-After, or
	// said so in the message, and did not perform the request.
	SecondaryRateLimit Reason = "secondary_rate_limit"
	// PrimaryRateLimit: the installation's hourly requests ran out
	// (x-ratelimit-remaining: 0) until x-ratelimit-reset.
	PrimaryRateLimit Reason = "primary_rate_limit"
	// ServerError: 500, 502, 503 or 504.
	ServerError Reason = "server_error"
	// NetworkError: no answer at all (connection refused or reset, timeout).
	NetworkError Reason = "network_error"
)

// verdict is what one answer from GitHub means for the request.
type verdict struct {
	reason Reason // "" when the answer is final
	// wait is how long GitHub asked to wait, when told.
	wait time.Duration
	told bool
	// message is GitHub's message, for the error when the wait is too long.
	message string
}

// judge classifies one attempt's answer. It never consumes res.Body: a body
// it reads is put back.
func judge(res *http.Response, err error, now time.Time) verdict {
	if err != nil {
		return verdict{reason: NetworkError}
	}
	switch res.StatusCode {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return verdict{reason: ServerError, wait: retryAfter(res.Header, now)}
	case http.StatusForbidden, http.StatusTooManyRequests:
	default:
		return verdict{}
	}
	// Retry-After comes first: GitHub sends it with secondary limits, and
	// then x-ratelimit-remaining may well be non-zero.
	if res.Header.Get("Retry-After") != "" {
		return verdict{reason: SecondaryRateLimit, wait: retryAfter(res.Header, now), told: true, message: peekMessage(res)}
	}
	if res.Header.Get("X-RateLimit-Remaining") == "0" {
		if reset, ok := resetTime(res.Header); ok {
			// The reset is whole seconds on GitHub's clock; never retry
			// sooner than a second, or a clock a little ahead spins.
			return verdict{reason: PrimaryRateLimit, wait: max(reset.Sub(now), time.Second), told: true, message: peekMessage(res)}
		}
	}
	// A 403 is mostly a missing permission; only the message tells a
	// secondary limit without Retry-After from it. A 429 is always a limit.
	msg := peekMessage(res)
	if res.StatusCode == http.StatusTooManyRequests || strings.Contains(strings.ToLower(msg), "rate limit") {
		return verdict{reason: SecondaryRateLimit, message: msg}
	}
	return verdict{}
}

// retryAfter reads Retry-After: seconds, or an HTTP date. 0 when absent.
func retryAfter(h http.Header, now time.Time) time.Duration {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// resetTime reads x-ratelimit-reset, epoch seconds.
func resetTime(h http.Header) (time.Time, bool) {
	secs, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64)
	if err != nil || secs <= 0 {
		return time.Time{}, false
	}
	return time.Unix(secs, 0), true
}

// exhausted reports the reset of a primary limit that an answer used up,
// successful or not.
func exhausted(res *http.Response) (time.Time, bool) {
	if res == nil || res.Header.Get("X-From-Cache") != "" || res.Header.Get("X-RateLimit-Remaining") != "0" {
		return time.Time{}, false
	}
	return resetTime(res.Header)
}

// peekMessage returns the start of the body (GitHub's JSON error) and puts
// the bytes back, so the caller still reads the whole answer.
func peekMessage(res *http.Response) string {
	if res.Body == nil {
		return ""
	}
	head, err := io.ReadAll(io.LimitReader(res.Body, 4<<10))
	res.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), res.Body), res.Body}
	if err != nil {
		return ""
	}
	var m struct {
		Message string `json:"message"`
	}
	if jsonErr := json.Unmarshal(head, &m); jsonErr == nil && m.Message != "" {
		return m.Message
	}
	return strings.TrimSpace(string(head))
}
