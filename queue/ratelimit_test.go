package queue_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/ghretry"
	"strata.dev/strata/store"
)

// limitedArgs is a job whose first Limited attempts find the installation
// out of requests, as ghretry reports it when the reset is further away
// than the job may wait.
type limitedArgs struct {
	Repo    string `json:"repo"`
	Limited int32  `json:"limited"`
}

func (limitedArgs) Kind() string { return "limited" }

type limitedWorker struct {
	river.WorkerDefaults[limitedArgs]
	calls atomic.Int32
}

func (w *limitedWorker) Work(_ context.Context, job *river.Job[limitedArgs]) error {
	if w.calls.Add(1) <= job.Args.Limited {
		limit := &ghretry.LimitError{Reason: ghretry.PrimaryRateLimit, Until: time.Now().Add(20 * time.Millisecond), Allowed: time.Millisecond}
		return fmt.Errorf("reply to the comment: %w", limit)
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
