package e2e

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivertype"

	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
)

// testClock is the servers' clock in a scenario (apptest.Options.Clock):
// real time, which the test moves forward instead of waiting.
type testClock struct {
	mu     sync.Mutex
	offset time.Duration
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.offset)
}

// elapse lets d pass: on the servers' clock, and for the queue in st's
// database (see jobsDue), which schedules by real time.
func (c *testClock) elapse(t *testing.T, st *store.Store, d time.Duration) {
	t.Helper()
	c.mu.Lock()
	c.offset += d
	c.mu.Unlock()
	jobsDue(t, st, d)
}

// jobsDue makes the jobs that the queue in st's database holds for later
// (scheduled, or waiting to retry) and that would be due within d due now,
// through River's own API: for the queue, d has passed.
func jobsDue(t *testing.T, st *store.Store, d time.Duration) {
	t.Helper()
	var err error
	switch st.Dialect() {
	case store.Postgres:
		err = dueWith(riverpgxv5.New(st.Pool()), d)
	default:
		err = dueWith(riversqlite.New(st.DB()), d)
	}
	if err != nil {
		t.Fatalf("making the queue's jobs due: %v", err)
	}
}

func dueWith[TTx any](driver riverdriver.Driver[TTx], d time.Duration) error {
	ctx := context.Background()
	client, err := river.NewClient(driver, &river.Config{}) // insert-only: it works no job
	if err != nil {
		return err
	}
	later, err := client.JobList(ctx, river.NewJobListParams().States(rivertype.JobStateScheduled, rivertype.JobStateRetryable).First(10000))
	if err != nil {
		return err
	}
	by := time.Now().Add(d)
	for _, j := range later.Jobs {
		if j.ScheduledAt.After(by) {
			continue
		}
		if _, err := client.JobRetry(ctx, j.ID); err != nil {
			return err
		}
	}
	return nil
}

// ageTakeovers lets d pass for the takeovers in st's database, for servers
// that run as processes and so keep real time: their expiries come d
// earlier.
func ageTakeovers(t *testing.T, st *store.Store, d time.Duration) {
	t.Helper()
	if _, err := st.DB().ExecContext(context.Background(), st.Rebind(`UPDATE takeovers SET started_at = started_at - ?, expires_at = expires_at - ?`),
		d.Milliseconds(), d.Milliseconds()); err != nil {
		t.Fatal(err)
	}
}

// withStore runs f on the database that the servers of a scenario share,
// while none runs.
func withStore(t *testing.T, dbURL, dataDir string, f func(*store.Store)) {
	t.Helper()
	st, err := store.Open(context.Background(), dbURL, dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f(st)
}

// nextRepin waits until a run of the periodic repin job that started after
// this call has finished.
func (e *syncsEnv) nextRepin() {
	e.t.Helper()
	st := e.Server.Store()
	latest := func() (*store.Run, error) {
		r, err := st.LatestRun(context.Background(), "", jobs.SyncRepin{}.Kind(), "")
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil
		}
		return r, err
	}
	var after int64
	if r, err := latest(); err != nil {
		e.t.Fatal(err)
	} else if r != nil {
		after = r.ID
	}
	e.WaitFor(syncsWait, func() bool {
		r, err := latest()
		return err == nil && r != nil && r.ID > after && r.Status != store.RunRunning
	})
}
