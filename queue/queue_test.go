package queue_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/queue"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

type echoArgs struct {
	Repo string `json:"repo"`
	N    int    `json:"n"`
}

func (echoArgs) Kind() string { return "echo" }

type echoWorker struct {
	river.WorkerDefaults[echoArgs]
	mu     sync.Mutex
	seen   []int
	queues []string // the queue of each job worked
}

func (w *echoWorker) Work(ctx context.Context, job *river.Job[echoArgs]) error {
	if queue.RunFrom(ctx) == nil {
		panic("job runs without a run record")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, job.Args.N)
	w.queues = append(w.queues, job.Queue)
	return nil
}

func (w *echoWorker) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.seen)
}

type sideArgs struct {
	Repo string `json:"repo"`
}

func (sideArgs) Kind() string { return "side_effect" }

type sideWorker struct {
	river.WorkerDefaults[sideArgs]
	runs atomic.Int32 // read by the test while River's goroutines may work
}

func (w *sideWorker) Work(context.Context, *river.Job[sideArgs]) error { w.runs.Add(1); return nil }

// onceArgs is a unique job: River keeps one of the same arguments.
type onceArgs struct {
	Repo string `json:"repo"`
}

func (onceArgs) Kind() string { return "once" }

func (onceArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

type onceWorker struct {
	river.WorkerDefaults[onceArgs]
	runs atomic.Int32
}

func (w *onceWorker) Work(context.Context, *river.Job[onceArgs]) error { w.runs.Add(1); return nil }

type interruptedWorker struct {
	river.WorkerDefaults[queue.Interrupted]
	got chan queue.Interrupted
}

func (w *interruptedWorker) Work(_ context.Context, job *river.Job[queue.Interrupted]) error {
	w.got <- job.Args
	return nil
}

type fixture struct {
	st   *store.Store
	q    *queue.Queue
	echo *echoWorker
	side *sideWorker
	once *onceWorker
	intr *interruptedWorker
	hold *holdWorker
	lim  *limitedWorker
}

func newFixture(t *testing.T, d store.Dialect) *fixture { return newLoggedFixture(t, d, nil) }

// newLoggedFixture is newFixture with the queue logging to log.
func newLoggedFixture(t *testing.T, d store.Dialect, log *slog.Logger) *fixture {
	// Reaped at once when a test makes a run's heartbeat a minute old, but
	// a live run is not taken for lost on a busy machine: 10 s of silence
	// (5 s before its own cancel), not 300 ms.
	return newFixtureWith(t, d, queue.Options{Workers: 2, RunQueue: runs, Heartbeat: 50 * time.Millisecond, StaleAfter: 10 * time.Second, Logger: log})
}

// runs is the fixtures' run queue (jobs.Runs in the server).
const runs = "runs"

var onRuns = &river.InsertOpts{Queue: runs}

func newFixtureWith(t *testing.T, d store.Dialect, opts queue.Options) *fixture {
	f := &fixture{st: storetest.Open(t, d), echo: &echoWorker{}, side: &sideWorker{}, once: &onceWorker{}, intr: &interruptedWorker{got: make(chan queue.Interrupted, 4)}, hold: &holdWorker{started: make(chan struct{}, 1), release: make(chan struct{})}, lim: &limitedWorker{started: make(chan struct{}, 1), release: make(chan struct{})}}
	workers := river.NewWorkers()
	river.AddWorker(workers, f.echo)
	river.AddWorker(workers, f.side)
	river.AddWorker(workers, f.once)
	river.AddWorker(workers, f.intr)
	river.AddWorker(workers, f.hold)
	river.AddWorker(workers, f.lim)
	q, err := queue.New(f.st, workers, opts)
	if err != nil {
		t.Fatal(err)
	}
	q.SetPolicy("side_effect", queue.Policy{Recovery: queue.Interrupt})
	if err := q.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	f.q = q
	return f
}

func (f *fixture) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := f.q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, c := context.WithTimeout(context.Background(), 10*time.Second)
		defer c()
		f.q.Stop(sctx)
		cancel()
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitIdle waits until the queue is at rest (queue.Pending is 0): every
// job enqueued so far, and every job those enqueued, has finished. It is the
// barrier before asserting that nothing more happened.
func waitIdle(t *testing.T, st *store.Store) {
	t.Helper()
	waitFor(t, "the queue at rest", func() bool { n, err := queue.Pending(context.Background(), st); return err == nil && n == 0 })
}

func forEachDialect(t *testing.T, test func(t *testing.T, d store.Dialect)) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			test(t, d)
		})
	}
}

func TestRedeliveryEnqueuesNothing(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		ok, err := f.q.Deliver(ctx, "delivery-1", "issue_comment", echoArgs{Repo: "acme/infra", N: 1}, echoArgs{Repo: "acme/infra", N: 2})
		if err != nil || !ok {
			t.Fatalf("first delivery: ok=%v err=%v", ok, err)
		}
		ok, err = f.q.Deliver(ctx, "delivery-1", "issue_comment", echoArgs{Repo: "acme/infra", N: 3})
		if err != nil || ok {
			t.Fatalf("redelivery: ok=%v err=%v, want false, nil", ok, err)
		}
		f.start(t)
		waitIdle(t, f.st)
		if n := f.echo.count(); n != 2 {
			t.Fatalf("worked %d jobs, want 2 (the redelivery must add none)", n)
		}
	})
}

// A delivery's jobs start when they are enqueued, not at the workers' next
// poll: on SQLite, without LISTEN/NOTIFY, a webhook's job used to wait up to
// FetchPollInterval. With an hour's poll, only the wake-up can start it.
func TestDeliveryWakesTheWorkers(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		// A 1 ms cooldown: a fetch asked for before the barrier below has
		// run by then, so none is left over to find the delivered job.
		f := newFixtureWith(t, d, queue.Options{Workers: 2, FetchPollInterval: time.Hour, FetchCooldown: time.Millisecond})
		// The barrier: a job enqueued outside a delivery (Enqueue wakes the
		// workers) is running, and holds its slot (a finished job would
		// ask for another fetch) until the delivered job has run.
		deliverWhileHeld(t, f, nil)
	})
}

// deliverWhileHeld starts f, holds a hold job enqueued with opts running,
// delivers an echo job and waits for it to be worked while the hold job
// still runs.
func deliverWhileHeld(t *testing.T, f *fixture, opts *river.InsertOpts) {
	t.Helper()
	f.start(t)
	if _, err := f.q.Enqueue(context.Background(), holdArgs{}, opts); err != nil {
		t.Fatal(err)
	}
	<-f.hold.started
	defer close(f.hold.release)
	ok, err := f.q.Deliver(context.Background(), "delivery-1", "issue_comment", echoArgs{Repo: "acme/infra", N: 1})
	if err != nil || !ok {
		t.Fatalf("delivery: ok=%v err=%v", ok, err)
	}
	waitFor(t, "the delivered job worked while the other runs", func() bool { return f.echo.count() == 1 })
}

// Runs have workers of their own: with every run worker busy, a delivery's
// job (a /cancel, say) is still worked. With one queue it waited for the
// run to end.
func TestJobsAreNotQueuedBehindRuns(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		deliverWhileHeld(t, newFixtureWith(t, d, queue.Options{Workers: 1, RunQueue: runs}), onRuns)
	})
}

// A run enqueued right after the default queue fetched (by the /plan
// command's job, which that fetch took) starts at once: the run queue has
// its own fetch cooldown. With one queue, it waited for the default
// queue's, here an hour.
func TestARunDoesNotWaitForTheDefaultQueuesCooldown(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixtureWith(t, d, queue.Options{Workers: 2, RunQueue: runs, FetchPollInterval: 2 * time.Hour, FetchCooldown: time.Hour})
		// The command: queued before the start, so the workers' first
		// fetch takes it; the default queue's cooldown runs from there.
		if _, err := f.q.Enqueue(context.Background(), echoArgs{Repo: "acme/infra", N: 1}, nil); err != nil {
			t.Fatal(err)
		}
		f.start(t)
		waitFor(t, "the command worked", func() bool { return f.echo.count() == 1 })
		if _, err := f.q.Enqueue(context.Background(), echoArgs{Repo: "acme/infra", N: 2}, onRuns); err != nil {
			t.Fatal(err)
		}
		waitFor(t, "the run it enqueued worked", func() bool { return f.echo.count() == 2 })
	})
}

// On PostgreSQL a delivery commits on the store's intake pool: with every
// connection of the main pool taken (busy workers, River's fetches and
// maintenance), its answer does not wait for one of them. With one pool it
// waited until the commit timeout and failed.
func TestDeliveryCommitsWhileTheMainPoolIsTaken(t *testing.T) {
	f := newFixture(t, store.Postgres)
	ctx := context.Background()
	pool := f.st.Pool()
	var held []interface{ Release() }
	for range pool.Config().MaxConns {
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	if n := pool.Stat().IdleConns(); n != 0 {
		t.Fatalf("%d idle connections left in the main pool, want none", n)
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ok, err := f.q.Deliver(dctx, "delivery-1", "issue_comment", echoArgs{Repo: "acme/infra", N: 1})
	if err != nil || !ok {
		t.Fatalf("delivery with the main pool taken: ok=%v err=%v, want it committed", ok, err)
	}
}

// holdArgs is a job that runs until its test lets it go.
type holdArgs struct{}

func (holdArgs) Kind() string { return "hold" }

type holdWorker struct {
	river.WorkerDefaults[holdArgs]
	started chan struct{}
	release chan struct{}
}

func (w *holdWorker) Work(context.Context, *river.Job[holdArgs]) error {
	w.started <- struct{}{}
	<-w.release
	return nil
}

type unencodable struct {
	Repo string    `json:"repo"`
	C    chan bool `json:"c"` // encoding/json refuses a channel
}

func (unencodable) Kind() string { return "echo" }

// A delivery whose jobs cannot be enqueued is not recorded either, so
// GitHub's redelivery of it enqueues them.
func TestDeliveryIsRecordedOnlyWithItsJobs(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		if ok, err := f.q.Deliver(ctx, "delivery-1", "issue_comment", echoArgs{Repo: "acme/infra", N: 1}, unencodable{Repo: "acme/infra"}); err == nil || ok {
			t.Fatalf("delivery with a job that cannot be encoded: ok=%v err=%v, want an error", ok, err)
		}
		ok, err := f.q.Deliver(ctx, "delivery-1", "issue_comment", echoArgs{Repo: "acme/infra", N: 2})
		if err != nil || !ok {
			t.Fatalf("redelivery: ok=%v err=%v, want true (the failed delivery left no record)", ok, err)
		}
		ok, err = f.q.Deliver(ctx, "delivery-2", "ping")
		if err != nil || !ok {
			t.Fatalf("delivery without jobs: ok=%v err=%v", ok, err)
		}
		if ok, err = f.q.Deliver(ctx, "delivery-2", "ping"); err != nil || ok {
			t.Fatalf("redelivery without jobs: ok=%v err=%v, want false", ok, err)
		}
		f.start(t)
		waitIdle(t, f.st)
		f.echo.mu.Lock()
		defer f.echo.mu.Unlock()
		if len(f.echo.seen) != 1 || f.echo.seen[0] != 2 {
			t.Fatalf("worked %v, want [2]: only the redelivery's job", f.echo.seen)
		}
	})
}

// A delivery whose unique job is already queued is recorded, its job
// skipped as a duplicate (a merge group asked for again), not refused:
// River's insert that reads no row back, which deliveries without a unique
// job take on SQLite, fails on a duplicate on PostgreSQL.
func TestDeliveryOfAUniqueJobAlreadyQueued(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		for i, id := range []string{"delivery-1", "delivery-2"} {
			ok, err := f.q.Deliver(ctx, id, "merge_group", onceArgs{Repo: "acme/infra"}, echoArgs{Repo: "acme/infra", N: i})
			if err != nil || !ok {
				t.Fatalf("%s: ok=%v err=%v, want it recorded", id, ok, err)
			}
		}
		f.start(t)
		waitIdle(t, f.st)
		if n := f.once.runs.Load(); n != 1 {
			t.Errorf("the unique job ran %d times, want once", n)
		}
		if n := f.echo.count(); n != 2 {
			t.Errorf("worked %d echo jobs, want 2 (one of each delivery)", n)
		}
	})
}

// Deliveries arriving together share a transaction, and each keeps its own
// fate: a redelivery among them enqueues nothing, a delivery whose job
// cannot be enqueued fails alone, the others are recorded with their jobs.
func TestConcurrentDeliveriesKeepTheirOwnFate(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		if ok, err := f.q.Deliver(ctx, "seen", "issue_comment", echoArgs{Repo: "acme/infra", N: -1}); err != nil || !ok {
			t.Fatalf("first delivery: ok=%v err=%v", ok, err)
		}
		const n = 48
		type outcome struct {
			ok  bool
			err error
		}
		outcomes := make([]outcome, n)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				id, args := fmt.Sprintf("d%d", i), []river.JobArgs{echoArgs{Repo: "acme/infra", N: i}}
				switch i % 8 {
				case 3:
					id = "seen" // a redelivery
				case 5:
					args = append(args, unencodable{Repo: "acme/infra"})
				}
				outcomes[i].ok, outcomes[i].err = f.q.Deliver(ctx, id, "issue_comment", args...)
			}()
		}
		close(start)
		wg.Wait()
		var want []int
		for i, o := range outcomes {
			switch i % 8 {
			case 3:
				if o.ok || o.err != nil {
					t.Errorf("redelivery %d: ok=%v err=%v, want false, nil", i, o.ok, o.err)
				}
			case 5:
				if o.ok || o.err == nil {
					t.Errorf("delivery %d with a job that cannot be encoded: ok=%v err=%v, want an error", i, o.ok, o.err)
				}
			default:
				if !o.ok || o.err != nil {
					t.Errorf("delivery %d: ok=%v err=%v, want true, nil", i, o.ok, o.err)
				}
				want = append(want, i)
			}
		}
		f.start(t)
		waitIdle(t, f.st)
		f.echo.mu.Lock()
		defer f.echo.mu.Unlock()
		got := slices.Sorted(slices.Values(f.echo.seen))
		if !slices.Equal(got, append([]int{-1}, want...)) {
			t.Fatalf("worked %v, want %v: each new delivery's job once, none of a redelivery or a failed one", got, append([]int{-1}, want...))
		}
	})
}

// Deliveries committed together, each recorded by the one statement of
// their batch: a delivery seen before and the same delivery twice in the
// batch are each taken once, and the batch falls back to one transaction
// per delivery so that the new ones are still taken.
func TestDeliveriesTogetherAreEachTakenOnce(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		if ok, err := f.q.Deliver(ctx, "seen", "issue_comment", echoArgs{Repo: "acme/infra", N: -1}); err != nil || !ok {
			t.Fatalf("first delivery: ok=%v err=%v", ok, err)
		}
		echo := func(n int) []river.JobArgs { return []river.JobArgs{echoArgs{Repo: "acme/infra", N: n}} }
		together := func(ds ...queue.Together) []bool { return queue.DeliverTogether(ctx, f.q, "issue_comment", ds...) }
		if got := together(queue.Together{ID: "a", Jobs: echo(1)}, queue.Together{ID: "b", Jobs: echo(2)}); !slices.Equal(got, []bool{true, true}) {
			t.Fatalf("two new deliveries together: taken %v, want both", got)
		}
		got := together(queue.Together{ID: "c", Jobs: echo(3)}, queue.Together{ID: "seen", Jobs: echo(4)}, queue.Together{ID: "d", Jobs: echo(5)}, queue.Together{ID: "d", Jobs: echo(6)}, queue.Together{ID: "b", Jobs: echo(7)})
		if want := []bool{true, false, true, false, false}; !slices.Equal(got, want) {
			t.Fatalf("new, seen, new, the same again, seen: taken %v, want %v", got, want)
		}
		f.start(t)
		waitIdle(t, f.st)
		f.echo.mu.Lock()
		defer f.echo.mu.Unlock()
		if got, want := slices.Sorted(slices.Values(f.echo.seen)), []int{-1, 1, 2, 3, 5}; !slices.Equal(got, want) {
			t.Fatalf("worked %v, want %v: the jobs of each delivery taken, once", got, want)
		}
	})
}

func TestEveryAttemptIsARun(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		f.start(t)
		id, err := f.q.Enqueue(context.Background(), echoArgs{Repo: "acme/infra", N: 7}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var runs []*store.Run
		waitFor(t, "a finished run", func() bool {
			runs, err = f.st.RunsOfJob(context.Background(), id)
			return err == nil && len(runs) == 1 && runs[0].Status == store.RunSucceeded
		})
		if runs[0].Repo != "acme/infra" || runs[0].Kind != "echo" {
			t.Fatalf("run = %+v, want repo acme/infra kind echo", runs[0])
		}
	})
}

// A run whose heartbeat stopped belongs to a process that died: a read-only
// job is run again, a job with side effects is reported, never rerun.
func TestLostRunsAreRecoveredByPolicy(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		echoID, err := f.q.Enqueue(ctx, echoArgs{Repo: "acme/infra", N: 9}, onRuns)
		if err != nil {
			t.Fatal(err)
		}
		sideID, err := f.q.Enqueue(ctx, sideArgs{Repo: "acme/infra"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Both were running in a process that died a minute ago: River holds
		// them as running (its own rescuer would wait hours), and their runs'
		// heartbeats stopped.
		for _, j := range []struct {
			id   int64
			kind string
		}{{echoID, "echo"}, {sideID, "side_effect"}} {
			if _, err := f.st.DB().ExecContext(ctx, f.st.Rebind(`UPDATE river_job SET state = 'running', attempt = 1 WHERE id = ?`), j.id); err != nil {
				t.Fatal(err)
			}
			run, err := f.st.StartRun(ctx, store.Run{JobID: j.id, Attempt: 1, Kind: j.kind, Repo: "acme/infra"})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.st.DB().ExecContext(ctx, f.st.Rebind(`UPDATE runs SET heartbeat_at = ? WHERE id = ?`),
				time.Now().Add(-time.Minute).UnixMilli(), run.ID); err != nil {
				t.Fatal(err)
			}
		}
		f.start(t)
		select {
		case got := <-f.intr.got:
			if got.JobKind != "side_effect" || got.JobID != sideID {
				t.Fatalf("interrupted report = %+v, want side_effect job %d", got, sideID)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no interrupted report for the side-effect job")
		}
		// Both recoveries are enqueued once the echo job ran again; then the
		// queue at rest is the barrier: nothing more will run.
		waitFor(t, "the echo job rerun", func() bool { return f.echo.count() == 1 })
		waitIdle(t, f.st)
		if n := f.side.runs.Load(); n != 0 {
			t.Fatalf("the side-effect job ran %d times after its process died, want 0", n)
		}
		if n := f.echo.count(); n != 1 {
			t.Fatalf("echo job worked %d times, want exactly 1 rerun", n)
		}
		f.echo.mu.Lock()
		defer f.echo.mu.Unlock()
		if q := f.echo.queues[0]; q != runs {
			t.Fatalf("the rerun was on queue %q, want the lost job's, %q", q, runs)
		}
	})
}
