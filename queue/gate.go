package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/riverqueue/river/riverdriver"

	"strata.dev/strata/store"
)

// gatedDriver is River's driver with two differences.
//
// A transaction River begins for a context that carries a gate (gateKey)
// runs its statements first, and is refused with errGateClosed, rolled
// back, when its gate statement does not change the rows it must. It lets
// deliveries' records and their jobs commit together through River's
// non-transactional insert (atomically says why).
//
// With inProcess (SQLite: one process owns the database), River is told the
// database has no listener: an insert then wakes this process's workers at
// once, where riversqlite's listener polls a notification table every 50 ms
// (and every insert writes a row to it) for other processes that cannot be
// there.
//
// It leans on River's driver interface, which River marks unstable: a River
// upgrade that changes it shows here at compile time, and
// TestDeliveryIsRecordedOnlyWithItsJobs and TestDeliveryWakesTheWorkers say
// whether the behaviour held.
type gatedDriver[TTx any] struct {
	riverdriver.Driver[TTx]
	exec      execFunc[TTx]
	inProcess bool
}

// execFunc runs one statement in the database's own transaction type and
// says how many rows it changed.
type execFunc[TTx any] func(ctx context.Context, tx TTx, sql string, args ...any) (int64, error)

type gateKey struct{}

// gate is what a transaction runs before River's inserts: stmts, of which
// the first, when rows > 0, must change exactly rows rows (a record for
// each delivery, the claim of a lost run).
type gate struct {
	stmts []store.Statement
	rows  int64
}

// errGateClosed: the gate statement did not change the rows it must (a
// delivery seen before, a run another replica claimed); nothing was
// written.
var errGateClosed = errors.New("gate closed")

func (d *gatedDriver[TTx]) GetExecutor() riverdriver.Executor {
	return gatedExecutor[TTx]{Executor: d.Driver.GetExecutor(), d: d}
}

func (d *gatedDriver[TTx]) SupportsListener() bool {
	return !d.inProcess && d.Driver.SupportsListener()
}

func (d *gatedDriver[TTx]) SupportsListenNotify() bool {
	return !d.inProcess && d.Driver.SupportsListenNotify()
}

// begin runs the context's statements in a transaction of their own, for a
// delivery that enqueues nothing.
func (d *gatedDriver[TTx]) begin(ctx context.Context) error {
	tx, err := d.GetExecutor().Begin(ctx)
	if err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

type gatedExecutor[TTx any] struct {
	riverdriver.Executor
	d *gatedDriver[TTx]
}

func (e gatedExecutor[TTx]) Begin(ctx context.Context) (riverdriver.ExecutorTx, error) {
	tx, err := e.Executor.Begin(ctx)
	if err != nil {
		return nil, err
	}
	g, _ := ctx.Value(gateKey{}).(gate)
	for i, s := range g.stmts {
		n, err := e.d.exec(ctx, e.d.UnwrapTx(tx), s.SQL, s.Args...)
		if err == nil && i == 0 && g.rows > 0 && n != g.rows {
			err = errGateClosed
		}
		if err != nil {
			tx.Rollback(context.WithoutCancel(ctx))
			return nil, err
		}
	}
	return tx, nil
}
