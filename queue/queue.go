// Package queue runs Strata's durable jobs on River, on the same database as
// the store: SQLite through riversqlite, PostgreSQL through riverpgxv5.
package queue

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"
	"github.com/rs/zerolog"

	"strata.dev/strata/store"
)

// Options configure the queue.
type Options struct {
	// Workers is how many jobs of each queue run at once on this replica
	// (STRATA_WORKERS): of RunQueue, and as many again of River's default.
	Workers int
	// RunQueue names the queue of runs (jobs.Runs): jobs that run a tool
	// for minutes. They get workers of their own, so a command or an
	// event is never queued behind them, and a fetch cooldown of their
	// own (runFetchCooldown), so a run enqueued by a job starts at once
	// instead of after the enqueuing job's queue's cooldown. Empty: one
	// queue for every job.
	RunQueue string
	// Log is the jobs' logger: each job's context carries it with the job's
	// kind, id, repository, PR and target (zerolog.Ctx).
	Log zerolog.Logger
	// Heartbeat is how often a running job renews its lease; a job silent
	// for StaleAfter (by the database's clock) is declared lost and
	// recovered by its kind's policy. A job that cannot renew for half of
	// StaleAfter is cancelled first, with ErrLeaseLost (lease.go).
	Heartbeat  time.Duration
	StaleAfter time.Duration
	// RescueAfter is when River itself rescues a job left running; it must
	// exceed the longest job timeout.
	RescueAfter  time.Duration
	PeriodicJobs []*river.PeriodicJob
	// FetchCooldown is River's least time between two fetches of jobs. A
	// job finishing asks for a fetch after it, so a job enqueued by a job (a
	// plan by its autoplan) starts within it. River's 100 ms default cost
	// plans up to 0.5 s; much shorter makes every finished job a fetch, and
	// on SQLite's single connection those fetches hold up webhook intake
	// (p99 45-50 ms at 500 deliveries/s with 5 ms, 9-14 ms with 50 ms).
	// Default 50 ms.
	FetchCooldown time.Duration
	// FetchPollInterval is how often River looks for jobs without being
	// told. Every insert tells this replica's workers at once (on SQLite in
	// process, gatedDriver; on PostgreSQL by NOTIFY, which reaches the other
	// replicas too), so the poll is a backstop: for a notification lost
	// while PostgreSQL's listener reconnects. Default 100 ms (River's: 1 s).
	FetchPollInterval time.Duration
	Logger            *slog.Logger
	// Observe is told about every finished job (for metrics).
	Observe func(kind string, state rivertype.JobState)
}

// runFetchCooldown is the run queue's least time between two fetches.
// Runs are few and each takes seconds to hours, so fetching whenever one
// is enqueued costs the database nothing measurable, where the default
// queue's cooldown (FetchCooldown, 50 ms) made a plan enqueued by its
// /plan command wait 35-40 ms for the fetch after the command's
// (docs/benchmarks.md, Plan latency). River wants more than zero.
const runFetchCooldown = time.Millisecond

// Queue enqueues and works durable jobs.
type Queue struct {
	store    *store.Store
	b        backend
	opts     Options
	policies map[string]Policy
	intake   intake
	stop     chan struct{}
	done     chan struct{}
}

// backend hides River's transaction type, which differs per driver.
type backend interface {
	migrate(ctx context.Context) error
	atomically(ctx context.Context, g gate, jobs []river.InsertManyParams) (bool, error)
	insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error)
	start(ctx context.Context) error
	stop(ctx context.Context) error
	stopAndCancel(ctx context.Context) error
	subscribe() (<-chan *river.Event, func())
	jobGet(ctx context.Context, id int64) (*rivertype.JobRow, error)
	jobList(ctx context.Context, params *river.JobListParams) ([]*rivertype.JobRow, error)
}

// New builds the queue over the store's database. Workers must already be
// registered in workers.
func New(st *store.Store, workers *river.Workers, opts Options) (*Queue, error) {
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = 10 * time.Second
	}
	if opts.StaleAfter <= 0 {
		opts.StaleAfter = 6 * opts.Heartbeat
	}
	if opts.RescueAfter <= 0 {
		opts.RescueAfter = 3 * time.Hour
	}
	if opts.FetchCooldown <= 0 {
		opts.FetchCooldown = 50 * time.Millisecond
	}
	if opts.FetchPollInterval <= 0 {
		opts.FetchPollInterval = 100 * time.Millisecond
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	q := &Queue{store: st, opts: opts, policies: map[string]Policy{}}
	queues := map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: opts.Workers}}
	if opts.RunQueue != "" && opts.RunQueue != river.QueueDefault {
		queues[opts.RunQueue] = river.QueueConfig{MaxWorkers: opts.Workers, FetchCooldown: runFetchCooldown}
	}
	cfg := &river.Config{
		Queues:               queues,
		Workers:              workers,
		WorkerMiddleware:     []rivertype.WorkerMiddleware{&tracker{q: q}},
		PeriodicJobs:         opts.PeriodicJobs,
		RescueStuckJobsAfter: opts.RescueAfter,
		FetchCooldown:        opts.FetchCooldown,
		FetchPollInterval:    opts.FetchPollInterval, // 0: River's default
		Logger:               opts.Logger,
		// Every kind sets its own attempts; this applies to none of ours.
		MaxAttempts: 1,
	}
	var err error
	switch st.Dialect() {
	case store.SQLite:
		var b *riverBackend[*sql.Tx]
		b, err = newRiverBackend(riversqlite.New(st.DB()), cfg, func(ctx context.Context, tx *sql.Tx, q string, args ...any) (int64, error) {
			res, err := tx.ExecContext(ctx, q, args...)
			if err != nil {
				return 0, err
			}
			return res.RowsAffected()
		}, true)
		if err == nil {
			// Intake's statements go first on the one connection
			// (store.Urgent), through the workers' client.
			q.b, q.intake.commit = b, b.atomically
			b.unreturned = true
		}
	case store.Postgres:
		exec := func(ctx context.Context, tx pgx.Tx, q string, args ...any) (int64, error) {
			tag, err := tx.Exec(ctx, st.Rebind(q), args...)
			return tag.RowsAffected(), err
		}
		var b, in *riverBackend[pgx.Tx]
		if b, err = newRiverBackend(riverpgxv5.New(st.Pool()), cfg, exec, false); err != nil {
			break
		}
		// Deliveries commit on a pool of their own, through a River client
		// that only inserts (no queues): their answer does not wait for a
		// connection behind the workers'. River's insert notifies the
		// workers' client, as any replica's.
		in, err = newRiverBackend(riverpgxv5.New(st.IntakePool()), &river.Config{
			Workers: workers, Logger: opts.Logger, MaxAttempts: cfg.MaxAttempts,
		}, exec, false)
		if err == nil {
			q.b, q.intake.commit = b, in.atomically
		}
	default:
		err = fmt.Errorf("no queue for database %q", st.Dialect())
	}
	if err != nil {
		return nil, err
	}
	return q, nil
}

// Migrate applies River's migrations.
func (q *Queue) Migrate(ctx context.Context) error { return q.b.migrate(ctx) }

// Deliver records a webhook delivery and enqueues its jobs in one
// transaction. It returns false, enqueueing nothing, for a delivery id seen
// before. Deliveries that arrive together share a transaction (intake.go).
func (q *Queue) Deliver(ctx context.Context, deliveryID, event string, jobs ...river.JobArgs) (bool, error) {
	ok, err := q.intake.deliver(ctx, newDelivery(deliveryID, event, jobs))
	if err != nil {
		return false, fmt.Errorf("delivery %s: %w", deliveryID, err)
	}
	return ok, nil
}

// Enqueue inserts one job outside any delivery.
func (q *Queue) Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (int64, error) {
	res, err := q.b.insert(ctx, args, opts)
	if err != nil {
		return 0, fmt.Errorf("enqueue %s: %w", args.Kind(), err)
	}
	return res.Job.ID, nil
}

// Start works jobs until Stop.
func (q *Queue) Start(ctx context.Context) error {
	if err := q.b.start(ctx); err != nil {
		return err
	}
	events, cancel := q.b.subscribe()
	q.stop, q.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(q.done)
		defer cancel()
		reap := time.NewTicker(q.opts.Heartbeat)
		defer reap.Stop()
		q.reap(ctx) // runs left by a crash before this start
		for {
			select {
			case <-q.stop:
				return
			case ev, ok := <-events:
				if !ok {
					return
				}
				if q.opts.Observe != nil && ev.Job != nil {
					q.opts.Observe(ev.Job.Kind, ev.Job.State)
				}
				q.logFailure(ev)
			case <-reap.C:
				q.reap(ctx)
			}
		}
	}()
	return nil
}

// Stop stops fetching new jobs and waits for running ones until ctx ends;
// then it cancels them. Queued jobs stay queued for the next start.
func (q *Queue) Stop(ctx context.Context) error {
	err := q.b.stop(ctx)
	if err != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		err = q.b.stopAndCancel(cctx)
	}
	if q.stop != nil {
		close(q.stop)
		<-q.done
	}
	return err
}

type riverBackend[TTx any] struct {
	driver *gatedDriver[TTx]
	client *river.Client[TTx]
	// unreturned: a delivery's jobs go through River's insert that reads
	// no row back when none of them is unique (atomically). On SQLite it
	// is the same statement without RETURNING; on PostgreSQL it is COPY,
	// a round trip more than the returning insert while the delivery
	// waits.
	unreturned bool
}

func newRiverBackend[TTx any](driver riverdriver.Driver[TTx], cfg *river.Config, exec execFunc[TTx], inProcess bool) (*riverBackend[TTx], error) {
	d := &gatedDriver[TTx]{Driver: driver, exec: exec, inProcess: inProcess}
	client, err := river.NewClient[TTx](d, cfg)
	if err != nil {
		return nil, fmt.Errorf("river client: %w", err)
	}
	return &riverBackend[TTx]{driver: d, client: client}, nil
}

func (b *riverBackend[TTx]) migrate(ctx context.Context) error {
	m, err := rivermigrate.New(b.driver, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	return nil
}

// atomically runs g's statements, then inserts jobs, in one transaction:
// all happen or none. When the gate statement does not change the rows it
// must (a delivery seen before, a lost run another replica claimed)
// nothing is written and atomically returns false.
//
// The jobs go through River's InsertMany, not InsertManyTx in a transaction
// of our own: on SQLite only the former tells this replica's workers at
// once (gatedDriver). The statements ride in the context to the
// transaction River begins.
func (b *riverBackend[TTx]) atomically(ctx context.Context, g gate, jobs []river.InsertManyParams) (bool, error) {
	ctx = context.WithValue(ctx, gateKey{}, g)
	var err error
	switch {
	case len(jobs) == 0:
		err = b.driver.begin(ctx)
	case b.unreturned && !slices.ContainsFunc(jobs, unique):
		// Without a unique job there is no duplicate for River to report,
		// so no row to read back: River's insert that returns its rows
		// turns each back into a job. The workers are woken the same way.
		_, err = b.client.InsertManyFast(ctx, jobs)
	default:
		_, err = b.client.InsertMany(ctx, jobs)
	}
	if errors.Is(err, errGateClosed) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// unique says whether River checks j against the jobs already there: a
// duplicate is then skipped and reported, which only River's returning
// insert does; its fast insert fails the whole batch on one. River takes
// the insert's own UniqueOpts, or, when they are empty, those of the
// arguments' InsertOpts; so does unique.
func unique(j river.InsertManyParams) bool {
	if j.InsertOpts != nil && uniqueBy(j.InsertOpts.UniqueOpts) {
		return true
	}
	w, ok := j.Args.(river.JobArgsWithInsertOpts)
	return ok && uniqueBy(w.InsertOpts().UniqueOpts)
}

// uniqueBy says whether u asks for uniqueness (River's UniqueOpts.isEmpty,
// negated).
func uniqueBy(u river.UniqueOpts) bool {
	return u.ByArgs || u.ByPeriod != 0 || u.ByQueue || u.ByState != nil || u.ExcludeKind
}

func (b *riverBackend[TTx]) insert(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return b.client.Insert(ctx, args, opts)
}

func (b *riverBackend[TTx]) start(ctx context.Context) error { return b.client.Start(ctx) }
func (b *riverBackend[TTx]) stop(ctx context.Context) error  { return b.client.Stop(ctx) }
func (b *riverBackend[TTx]) stopAndCancel(ctx context.Context) error {
	return b.client.StopAndCancel(ctx)
}

func (b *riverBackend[TTx]) subscribe() (<-chan *river.Event, func()) {
	return b.client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed, river.EventKindJobCancelled)
}

func (b *riverBackend[TTx]) jobGet(ctx context.Context, id int64) (*rivertype.JobRow, error) {
	return b.client.JobGet(ctx, id)
}
