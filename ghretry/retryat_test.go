package ghretry_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/ghretry"
)

func TestRetryAt(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	reset := now.Add(40 * time.Minute)
	thirty := 30 * time.Second
	for _, tc := range []struct {
		name string
		err  error
		at   time.Time
		ok   bool
	}{
		{"no error", nil, time.Time{}, false},
		{"another error", errors.New("404 Not Found"), time.Time{}, false},
		{"the middleware's limit, wrapped", fmt.Errorf("reply: %w", &ghretry.LimitError{Reason: ghretry.PrimaryRateLimit, Until: reset}), reset, true},
		{"go-github's remembered limit", fmt.Errorf("react: %w", &github.RateLimitError{Rate: github.Rate{Limit: 5000, Reset: github.Timestamp{Time: reset}}}), reset, true},
		{"a secondary limit with its wait", &github.AbuseRateLimitError{RetryAfter: &thirty}, now.Add(30 * time.Second), true},
		{"a secondary limit without one", &github.AbuseRateLimitError{}, now.Add(time.Minute), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			at, ok := ghretry.RetryAt(tc.err, now)
			if ok != tc.ok || !at.Equal(tc.at) {
				t.Fatalf("RetryAt = %v, %v; want %v, %v", at, ok, tc.at, tc.ok)
			}
			if got := ghretry.Limited(tc.err); got != tc.ok {
				t.Fatalf("Limited = %v, want %v", got, tc.ok)
			}
		})
	}
}
