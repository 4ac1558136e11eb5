package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
)

// waitQueued waits until t has urgent and normal waiters queued: the
// waiters are goroutines, and the order under test is the order they
// queued in.
func waitQueued(tr *turns, urgent, normal int) {
	for {
		tr.mu.Lock()
		u, n := len(tr.urgent), len(tr.normal)
		tr.mu.Unlock()
		if u == urgent && n == normal {
			return
		}
		runtime.Gosched()
	}
}

func TestTurnsGoToUrgentWaitersFirstThenInOrder(t *testing.T) {
	var tr turns
	if err := tr.take(context.Background()); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var order []string
	var wg sync.WaitGroup
	wait := func(name string, ctx context.Context) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := tr.take(ctx); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			tr.give()
		}()
	}
	bg := context.Background()
	wait("worker 1", bg)
	waitQueued(&tr, 0, 1)
	wait("worker 2", bg)
	waitQueued(&tr, 0, 2)
	wait("delivery 1", Urgent(bg))
	waitQueued(&tr, 1, 2)
	wait("worker 3", bg)
	waitQueued(&tr, 1, 3)
	wait("delivery 2", Urgent(bg))
	waitQueued(&tr, 2, 3)
	tr.give()
	wg.Wait()
	want := []string{"delivery 1", "delivery 2", "worker 1", "worker 2", "worker 3"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("turns went to %q, want %q", order, want)
	}
	if tr.held {
		t.Fatal("the turn is still held after every waiter gave it back")
	}
}

// A waiter whose context ends leaves the queue; one whose context ends as
// the turn reaches it passes the turn on. Either way the next waiter gets
// it, and nobody holds it once all are done.
func TestTurnsOfAWaiterWhoLeftGoToTheNext(t *testing.T) {
	for i := 0; i < 200; i++ {
		var tr turns
		if err := tr.take(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(Urgent(context.Background()))
		left := make(chan error, 1)
		go func() { left <- tr.take(ctx) }()
		waitQueued(&tr, 1, 0)
		next := make(chan error, 1)
		go func() { next <- tr.take(context.Background()) }()
		waitQueued(&tr, 1, 1)
		// The holder gives the turn as the first waiter's context ends: the
		// turn reaches it before or after it leaves.
		go cancel()
		tr.give()
		if err := <-left; err == nil {
			// It took the turn before its context ended: it holds it.
			tr.give()
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("the waiter who left got %v, want context.Canceled", err)
		}
		if err := <-next; err != nil {
			t.Fatalf("the next waiter got %v", err)
		}
		tr.give()
		if tr.held || len(tr.urgent)+len(tr.normal) > 0 {
			t.Fatalf("after all gave the turn back: held %v, %d waiting", tr.held, len(tr.urgent)+len(tr.normal))
		}
	}
}

func openTurnDB(t *testing.T) (*sql.DB, *sharedConn) {
	t.Helper()
	dsn := "file:" + filepath.Join(t.TempDir(), "t.db") + "?_pragma=journal_mode(WAL)&_txlock=immediate"
	c, err := newSQLiteConnector(dsn)
	if err != nil {
		t.Fatal(err)
	}
	db := sql.OpenDB(c)
	db.SetMaxOpenConns(sqliteHandles)
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	if _, err := db.Exec(`CREATE TABLE served (n INTEGER PRIMARY KEY, who TEXT NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return db, c.shared
}

// A delivery's statement waits for the transaction holding the connection,
// then goes before the workers' statements that came before it.
func TestUrgentStatementsGoBeforeQueuedOnes(t *testing.T) {
	db, shared := openTurnDB(t)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	insert := func(ctx context.Context, who string) error {
		_, err := db.ExecContext(ctx, `INSERT INTO served (who) VALUES (?)`, who)
		return err
	}
	var wg sync.WaitGroup
	run := func(ctx context.Context, who string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := insert(ctx, who); err != nil {
				t.Error(err)
			}
		}()
	}
	for i := 1; i <= 3; i++ {
		run(ctx, fmt.Sprint("worker ", i))
		waitQueued(&shared.turns, 0, i)
	}
	run(Urgent(ctx), "delivery")
	waitQueued(&shared.turns, 1, 3)
	if _, err := tx.Exec(`INSERT INTO served (who) VALUES ('transaction')`); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	rows, err := db.Query(`SELECT who FROM served ORDER BY n`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var order []string
	for rows.Next() {
		var who string
		if err := rows.Scan(&who); err != nil {
			t.Fatal(err)
		}
		order = append(order, who)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	want := []string{"transaction", "delivery", "worker 1", "worker 2", "worker 3"}
	if fmt.Sprint(order) != fmt.Sprint(want) {
		t.Fatalf("statements ran in the order %q, want %q", order, want)
	}
}

// The same query twice while the first one's rows are open (in one
// transaction) gets a statement of its own; both read their own rows.
func TestCachedStatementInUseIsNotShared(t *testing.T) {
	db, shared := openTurnDB(t)
	for i := 0; i < 3; i++ {
		if _, err := db.Exec(`INSERT INTO served (who) VALUES (?)`, fmt.Sprint("w", i)); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	const q = `SELECT who FROM served WHERE n >= ? ORDER BY n`
	outer, err := tx.Query(q, 1)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var who string
		if err := outer.Scan(&who); err != nil {
			t.Fatal(err)
		}
		inner, err := tx.Query(q, 3)
		if err != nil {
			t.Fatal(err)
		}
		for inner.Next() {
			var last string
			if err := inner.Scan(&last); err != nil {
				t.Fatal(err)
			}
			who += "/" + last
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		got = append(got, who)
	}
	if err := outer.Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{"w0/w2", "w1/w2", "w2/w2"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("nested reads gave %q, want %q", got, want)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	// Both uses are over: the cached statement is free again.
	if cs := shared.stmts[q]; cs == nil || cs.busy {
		t.Fatalf("cached statement after its rows closed: %+v, want one not busy", cs)
	}
}

// More distinct queries than the cache holds: it stays at its bound, and
// every query still answers.
func TestStatementCacheStaysBounded(t *testing.T) {
	db, shared := openTurnDB(t)
	for i := 0; i < maxCachedStmts+100; i++ {
		var n int
		if err := db.QueryRow(fmt.Sprintf(`SELECT %d + ?`, i), 1).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != i+1 {
			t.Fatalf("SELECT %d + 1 = %d", i, n)
		}
	}
	if len(shared.stmts) > maxCachedStmts {
		t.Fatalf("%d statements cached, bound %d", len(shared.stmts), maxCachedStmts)
	}
}
