package queue

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/riverqueue/river/rivertype"

	"strata.dev/strata/ghretry"
)

func TestLimitSnooze(t *testing.T) {
	now := time.Date(2026, 12, 6, 10, 0, 0, 0, time.UTC)
	limited := fmt.Errorf("reply: %w", &ghretry.LimitError{Reason: ghretry.PrimaryRateLimit, Until: now.Add(20 * time.Minute)})
	remembered := fmt.Errorf("react: %w", &github.RateLimitError{Rate: github.Rate{Reset: github.Timestamp{Time: now.Add(10 * time.Minute)}}})
	for _, tc := range []struct {
		name     string
		err      error
		max      int
		metadata string
		snooze   bool
		least    time.Duration // the wait without its jitter
	}{
		{"the middleware's limit, attempts left", limited, 3, `{}`, true, 20 * time.Minute},
		{"go-github's remembered limit", remembered, 3, `{}`, true, 10 * time.Minute},
		{"snoozed eleven times before", limited, 3, `{"snoozes": 11}`, true, 20 * time.Minute},
		{"snoozed twelve times: it fails", limited, 3, `{"snoozes": 12}`, false, 0},
		{"a job that runs once", limited, 1, `{}`, false, 0},
		{"another error", errors.New("500 Internal Server Error"), 3, `{}`, false, 0},
		{"no error", nil, 3, `{}`, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			job := &rivertype.JobRow{MaxAttempts: tc.max, Attempt: 1, Metadata: []byte(tc.metadata)}
			wait, snooze := limitSnooze(tc.err, job, now)
			if snooze != tc.snooze {
				t.Fatalf("snooze = %v, want %v", snooze, tc.snooze)
			}
			// The jitter: at most a tenth of the wait plus a second, at
			// most a minute.
			if snooze && (wait < tc.least || wait > tc.least+time.Minute) {
				t.Fatalf("wait = %v, want %v plus at most a minute", wait, tc.least)
			}
		})
	}
}
