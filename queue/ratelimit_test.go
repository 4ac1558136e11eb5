package queue_test

import (
	"cmp"
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/ghretry"
	"strata.dev/strata/queue"
	"strata.dev/strata/store"
)

// limitedArgs is a job whose first Limited attempts find the installation
// out of requests, as ghretry reports it when the reset is further away
// than the job may wait.
type limitedArgs struct {
	Repo    string `json:"repo"`
	Limited int32  `json:"limited"`
	// WaitFor is how long each limit lasts; 20 ms when zero.
	WaitFor time.Duration `json:"wait_for"`
	// Hold keeps the working after the limits running until the test
	// releases it.
	Hold bool `json:"hold"`
}

func (limitedArgs) Kind() string { return "limited" }

type limitedWorker struct {
	river.WorkerDefaults[limitedArgs]
	calls   atomic.Int32
	started chan struct{}
	release chan struct{}
}

func (w *limitedWorker) Work(_ context.Context, job *river.Job[limitedArgs]) error {
	if w.calls.Add(1) <= job.Args.Limited {
		wait := cmp.Or(job.Args.WaitFor, 20*time.Millisecond)
		limit := &ghretry.LimitError{Reason: ghretry.PrimaryRateLimit, Until: time.Now().Add(wait), Allowed: time.Millisecond}
		return fmt.Errorf("reply to the comment: %w", limit)
	}
	if job.Args.Hold {
		w.started <- struct{}{}
		<-w.release
	}
	return nil
}

func jobState(t *testing.T, st *store.Store, id int64) string {
	t.Helper()
	var state string
	if err := st.DB().QueryRowContext(context.Background(), st.Rebind(`SELECT state FROM river_job WHERE id = ?`), id).Scan(&state); err != nil {
		t.Fatal(err)
	}
	return state
}

// A burst of comments that runs an installation out of GitHub requests
// must not lose them: a job that may be retried waits for the reset as often
// as it takes, without spending its attempts. Before, each limited attempt
// counted, and the job was discarded after its last one, the comment never
// answered.
func TestJobsWaitOutGitHubsRateLimit(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		f.start(t)
		// Two attempts, found limited three times: only a wait that costs
		// no attempt gets it done.
		id, err := f.q.Enqueue(context.Background(), limitedArgs{Repo: "acme/infra", Limited: 3}, &river.InsertOpts{MaxAttempts: 2})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the job completed or discarded", func() bool {
			s := jobState(t, f.st, id)
			return s == "completed" || s == "discarded"
		})
		if s := jobState(t, f.st, id); s != "completed" {
			t.Fatalf("job state = %s after %d calls, want completed", s, f.lim.calls.Load())
		}
		if n := f.lim.calls.Load(); n != 4 {
			t.Fatalf("worked %d times, want 4 (3 limited, 1 done)", n)
		}
		runs, err := f.st.RunsOfJob(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) != 4 || runs[0].Status != store.RunFailed || runs[0].Summary == "" || runs[3].Status != store.RunSucceeded {
			t.Fatalf("runs = %+v, want 3 failed with a summary saying why, then 1 succeeded", runs)
		}
	})
}

// A job that runs once (an apply, a takeover) is not run again because of a
// limit: it may have acted before it ran out.
func TestJobsThatRunOnceAreNotRerunForARateLimit(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		f.start(t)
		id, err := f.q.Enqueue(context.Background(), limitedArgs{Repo: "acme/infra", Limited: 1}, &river.InsertOpts{MaxAttempts: 1})
		if err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the job discarded", func() bool { return jobState(t, f.st, id) == "discarded" })
		waitIdle(t, f.st)
		if n := f.lim.calls.Load(); n != 1 {
			t.Fatalf("worked %d times, want 1", n)
		}
	})
}

// A job working again after waiting out a limit is pending work: the queue's
// barrier (queue.Pending) must count it, not take it for the dead row of a
// process that died because its first run ended long ago.
func TestAJobWorkingAgainAfterALimitIsPending(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		f.start(t)
		// Longer than a dead row's grace (3 s) after its first run ended.
		args := limitedArgs{Repo: "acme/infra", Limited: 1, WaitFor: 4 * time.Second, Hold: true}
		if _, err := f.q.Enqueue(context.Background(), args, &river.InsertOpts{MaxAttempts: 3}); err != nil {
			t.Fatal(err)
		}
		<-f.lim.started
		n, err := queue.Pending(context.Background(), f.st)
		close(f.lim.release)
		if err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("pending = %d while the job works again after its snooze, want 1", n)
		}
		waitIdle(t, f.st)
	})
}
