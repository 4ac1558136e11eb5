package queue_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/queue"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

type probeArgs struct {
	Repo string `json:"repo"`
}

func (probeArgs) Kind() string { return "probe" }

// probeWorker stands for a plan: its first run works until its context ends
// (or the test lets it go), later runs end at once. It records when the
// first run ended and when each later one began.
type probeWorker struct {
	river.WorkerDefaults[probeArgs]
	letGo chan struct{}
	ended chan struct{} // the first run ended; the fields below are set
	cause error         // why the first run's context ended
	grace time.Duration

	mu       sync.Mutex
	runs     int
	firstEnd time.Time
	retries  []time.Time // when later runs began
}

func (w *probeWorker) Work(ctx context.Context, job *river.Job[probeArgs]) error {
	w.mu.Lock()
	w.runs++
	first := w.runs == 1
	if !first {
		w.retries = append(w.retries, time.Now())
	}
	w.mu.Unlock()
	if !first {
		return nil
	}
	w.grace = queue.StopGrace(ctx)
	select {
	case <-ctx.Done():
	case <-w.letGo:
	}
	w.mu.Lock()
	w.firstEnd = time.Now()
	w.mu.Unlock()
	w.cause = context.Cause(ctx)
	close(w.ended)
	return ctx.Err()
}

func (w *probeWorker) seen() (runs int, firstEnd time.Time, retries []time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.runs, w.firstEnd, append([]time.Time(nil), w.retries...)
}

// startProbe starts a queue (heartbeat 1 s, cancelled after 3 s without a
// renewal, lost after 6 s) whose only worker is a probe. A busy machine
// holds up renewals for hundreds of milliseconds: a shorter lease cancelled
// live runs (a run claimed by another replica then ended for the wrong
// cause), and the last quarter, between the kill and the reaper's claim,
// is 1.5 s for the job's return, which a 1 s lease (250 ms) did not always
// leave.
func startProbe(t *testing.T, st *store.Store) (*queue.Queue, *probeWorker) {
	t.Helper()
	w := &probeWorker{letGo: make(chan struct{}), ended: make(chan struct{})}
	workers := river.NewWorkers()
	river.AddWorker(workers, w)
	q, err := queue.New(st, workers, queue.Options{Workers: 2, Heartbeat: time.Second, StaleAfter: 6 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	f := &fixture{st: st, q: q}
	f.start(t)
	// Before the queue stops (cleanups run last first).
	t.Cleanup(func() { close(w.letGo) })
	return q, w
}

// cutHeartbeats makes every renewal of a run's lease fail, as when the
// replica running it lost its database connection; the rest of the store
// still answers, so the test can watch.
func cutHeartbeats(t *testing.T, st *store.Store) {
	t.Helper()
	stmts := []string{`CREATE TRIGGER cut_heartbeats BEFORE UPDATE OF heartbeat_at ON runs
		BEGIN SELECT RAISE(ABORT, 'database unreachable'); END`}
	if st.Dialect() == store.Postgres {
		stmts = []string{
			`CREATE FUNCTION cut_heartbeats() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN RAISE EXCEPTION 'database unreachable'; END $$`,
			`CREATE TRIGGER cut_heartbeats BEFORE UPDATE OF heartbeat_at ON runs
				FOR EACH ROW EXECUTE FUNCTION cut_heartbeats()`,
		}
	}
	for _, s := range stmts {
		if _, err := st.DB().Exec(s); err != nil {
			t.Fatal(err)
		}
	}
}

// A plan's replica cannot renew its lease (its database connection is gone)
// -> the plan is cancelled, with a cause that says so, while its lease still
// holds; only then does the reaper declare it lost and retry it, so the two
// runs never overlap. River does not retry it a second time.
func TestRunThatCannotRenewItsLeaseStopsBeforeItIsRetried(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		st := storetest.Open(t, d)
		cutHeartbeats(t, st)
		q, w := startProbe(t, st)
		id, err := q.Enqueue(context.Background(), probeArgs{Repo: "acme/infra"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var firstEnd time.Time
		var retries []time.Time
		waitFor(t, "the retry of the plan", func() bool {
			_, firstEnd, retries = w.seen()
			return len(retries) == 1
		})
		if firstEnd.IsZero() || firstEnd.After(retries[0]) {
			t.Fatalf("the retry started at %s while the first run still ran", retries[0].Format(time.StampMilli))
		}
		<-w.ended
		if !errors.Is(w.cause, queue.ErrLeaseLost) {
			t.Fatalf("the first run ended because of %v, want a lost lease", w.cause)
		}
		if w.grace <= 0 || w.grace >= 3*time.Second {
			t.Fatalf("stop grace %s, want more than 0 and less than half of the lease", w.grace)
		}
		waitFor(t, "the queue at rest", func() bool { n, err := queue.Pending(context.Background(), st); return err == nil && n == 0 })
		runs, err := st.RunsOfJob(context.Background(), id)
		if err != nil || len(runs) != 1 || runs[0].Status != store.RunLost {
			t.Fatalf("runs of the cut job = %+v, %v; want one, lost", runs, err)
		}
		// Declared lost (finished_at, by the database's clock on this host)
		// only after the run had stopped: it never outlived its lease.
		if !firstEnd.Before(runs[0].FinishedAt) {
			t.Fatalf("the run stopped at %s, after it was declared lost at %s", firstEnd.Format(time.StampMilli), runs[0].FinishedAt.Format(time.StampMilli))
		}
		var state string
		if err := st.DB().QueryRow(st.Rebind(`SELECT state FROM river_job WHERE id = ?`), id).Scan(&state); err != nil || state != "cancelled" {
			t.Fatalf("River job state %q (%v), want cancelled: not retried by River as well", state, err)
		}
		if n, _, _ := w.seen(); n != 2 {
			t.Fatalf("the plan ran %d times, want 2 (the cut run and one retry)", n)
		}
	})
}

// Another replica already declared the run lost (its heartbeats were late)
// -> the next renewal finds the run taken and the job is cancelled at once,
// not half a lease later.
func TestRunClaimedByAnotherReplicaStopsAtOnce(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		st := storetest.Open(t, d)
		q, w := startProbe(t, st)
		id, err := q.Enqueue(context.Background(), probeArgs{Repo: "acme/infra"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var run *store.Run
		waitFor(t, "the run", func() bool {
			runs, err := st.RunsOfJob(context.Background(), id)
			if err != nil || len(runs) == 0 {
				return false
			}
			run = runs[0]
			return true
		})
		// Claimed as another replica's reaper claims it (and then keeps it:
		// no retry here).
		if err := st.FinishRun(context.Background(), run.ID, store.RunLost, "", ""); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.ended:
		case <-time.After(20 * time.Second):
			t.Fatal("the run goes on after another replica claimed it")
		}
		if !errors.Is(w.cause, queue.ErrLeaseLost) || !errors.Is(w.cause, store.ErrRunEnded) {
			t.Fatalf("the run ended because of %v, want a lease taken by another replica", w.cause)
		}
	})
}

// A run whose job River let go when its lease was lost waits for a reaper
// -> the queue is not at rest until the reaper has recovered it.
func TestPendingCountsARunAwaitingItsReaper(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		id, err := f.q.Enqueue(ctx, echoArgs{Repo: "acme/infra"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.DB().ExecContext(ctx, f.st.Rebind(`UPDATE river_job SET state = 'cancelled', attempt = 1, finalized_at = created_at WHERE id = ?`), id); err != nil {
			t.Fatal(err)
		}
		if _, err := f.st.StartRun(ctx, store.Run{JobID: id, Attempt: 1, Kind: "echo", Repo: "acme/infra"}); err != nil {
			t.Fatal(err)
		}
		if n, err := queue.Pending(ctx, f.st); err != nil || n != 1 {
			t.Fatalf("pending = %d, %v; want 1 (the run awaiting its reaper)", n, err)
		}
		if lost := storetest.DeclareLost(t, f.st, -time.Second); len(lost) != 1 {
			t.Fatalf("declared %d runs lost, want 1", len(lost))
		}
		if n, err := queue.Pending(ctx, f.st); err != nil || n != 0 {
			t.Fatalf("pending after the claim = %d, %v; want 0", n, err)
		}
	})
}
