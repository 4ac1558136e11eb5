package githubtest

import (
	"context"
	"sync"
	"time"
)

// Clock is a clock for the fake's rate limits that the waits of a client
// move: Sleep returns at once, the clock moved on by its duration. Given to
// the fake (SetClock) and to the client that waits out GitHub's limits
// (Strata's ghretry: apptest.Options.GitHubClock), a test goes through rate
// limits and their resets without waiting for them, and Waited says how
// long the client would have waited. It starts at the wall clock's now and
// only moves forward; concurrent waits add up.
type Clock struct {
	mu         sync.Mutex
	start, now time.Time
}

// NewClock starts a clock at the wall clock's now.
func NewClock() *Clock {
	now := time.Now()
	return &Clock{start: now, now: now}
}

// Now is the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Sleep moves the clock on by d, unless ctx has ended (then it returns
// ctx.Err(), as a real wait would).
func (c *Clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(max(d, 0))
	return nil
}

// Set moves the clock to t, when t is later.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
}

// Waited is how far the clock has moved since it started.
func (c *Clock) Waited() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now.Sub(c.start)
}
