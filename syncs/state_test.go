package syncs

import (
	"testing"
	"time"

	"strata.dev/strata/store"
)

// A takeover's state from its row and the clock.
func TestTakeoverStateOf(t *testing.T) {
	now := time.Date(2030, 1, 2, 15, 0, 0, 0, time.UTC)
	held := func(expires time.Time) *store.Takeover {
		return &store.Takeover{Repo: "acme/infra", Sync: "dev", PR: 1, ExpiresAt: expires}
	}
	ending := func(expires time.Time) *store.Takeover {
		t := held(expires)
		t.EndedAt, t.Why = now.Add(-time.Minute), "@alice released it"
		return t
	}
	for _, tc := range []struct {
		name string
		row  *store.Takeover
		want TakeoverState
	}{
		{name: "no row: given back, or never taken", want: TakeoverReleased},
		{name: "time left", row: held(now.Add(time.Hour)), want: TakeoverHeld},
		{name: "two seconds left", row: held(now.Add(2 * time.Second)), want: TakeoverHeld},
		{name: "within the expiry job's slack", row: held(now.Add(500 * time.Millisecond)), want: TakeoverExpired},
		{name: "expiring now", row: held(now), want: TakeoverExpired},
		{name: "overdue", row: held(now.Add(-time.Hour)), want: TakeoverExpired},
		{name: "ended, time left", row: ending(now.Add(time.Hour)), want: TakeoverEnding},
		{name: "ended after it expired", row: ending(now.Add(-time.Hour)), want: TakeoverEnding},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TakeoverStateOf(tc.row, now); got != tc.want {
				t.Fatalf("state = %s, want %s", got, tc.want)
			}
		})
	}
}
