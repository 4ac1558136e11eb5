package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
	"reflect"
	"sync"

	"modernc.org/sqlite"
)

// SQLite allows one writer, and River's SQLite driver wants one connection
// for everything (its maintenance runs beside the workers). With
// database/sql's pool at one connection, its waiters take it in random
// order: a webhook's delivery, whose answer GitHub waits for, queued behind
// every worker's heartbeat, fetch and completion (issue 22, item 5).
//
// So database/sql gets as many connections as it asks for, each of them the
// same SQLite connection taken in turns (turns): a transaction holds the
// turn from BEGIN to COMMIT or ROLLBACK, any other statement until it ends
// (a query: until its rows are closed). Everything still runs one at a time
// on one connection, as River wants; what changes is who goes next: a
// context marked Urgent (webhook intake) first, then the others in the
// order they came.
//
// The connection also keeps its prepared statements (prepared): modernc's
// driver prepares every statement again, and parsing River's insert was a
// sixth of Strata's CPU at 1,000 deliveries a second.

// urgentKey marks a context whose statements go first.
type urgentKey struct{}

// Urgent marks ctx's statements on SQLite to go before other waiters' (a
// webhook delivery, answered while GitHub waits). It changes nothing on
// PostgreSQL.
func Urgent(ctx context.Context) context.Context {
	return context.WithValue(ctx, urgentKey{}, true)
}

func isUrgent(ctx context.Context) bool {
	u, _ := ctx.Value(urgentKey{}).(bool)
	return u
}

// turns hands the connection to one holder at a time: urgent waiters
// first, then the others, each in the order they came.
type turns struct {
	mu     sync.Mutex
	held   bool
	urgent []chan struct{}
	normal []chan struct{}
}

// take waits for the turn, or for ctx to end.
func (t *turns) take(ctx context.Context) error {
	t.mu.Lock()
	if !t.held {
		t.held = true
		t.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if isUrgent(ctx) {
		t.urgent = append(t.urgent, ch)
	} else {
		t.normal = append(t.normal, ch)
	}
	t.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	t.mu.Lock()
	if drop(&t.urgent, ch) || drop(&t.normal, ch) {
		t.mu.Unlock()
		return ctx.Err()
	}
	t.mu.Unlock()
	// The turn was handed over as ctx ended: pass it on.
	t.give()
	return ctx.Err()
}

// give ends the holder's turn: the next waiter's, or nobody's.
func (t *turns) give() {
	t.mu.Lock()
	var next chan struct{}
	switch {
	case len(t.urgent) > 0:
		next, t.urgent = t.urgent[0], t.urgent[1:]
	case len(t.normal) > 0:
		next, t.normal = t.normal[0], t.normal[1:]
	default:
		t.held = false
	}
	t.mu.Unlock()
	if next != nil {
		close(next)
	}
}

func drop(q *[]chan struct{}, ch chan struct{}) bool {
	for i, c := range *q {
		if c == ch {
			*q = append((*q)[:i], (*q)[i+1:]...)
			return true
		}
	}
	return false
}

// sqliteHandles is how many of database/sql's connections there are: the
// workers, River's producer and maintainers, the web UI and intake, each
// waiting for its turn rather than for a connection.
const sqliteHandles = 64

// maxCachedStmts bounds the statement cache; Strata's and River's
// statements are a few hundred texts at most.
const maxCachedStmts = 512

// sharedConn is the one SQLite connection, with its prepared statements.
// Only the turn's holder touches conn, stmts and closed.
type sharedConn struct {
	turns turns

	opening sync.Mutex
	inner   driver.Connector // modernc's
	conn    driver.Conn
	stmts   map[string]*cachedStmt
	closed  bool
}

type cachedStmt struct {
	stmt driver.Stmt
	busy bool // its rows are open: a second query prepares its own
}

// sqliteConnector is the database/sql connector over the shared connection.
type sqliteConnector struct{ shared *sharedConn }

func newSQLiteConnector(dsn string) (*sqliteConnector, error) {
	inner, err := sqlite.NewConnector(dsn)
	if err != nil {
		return nil, err
	}
	return &sqliteConnector{shared: &sharedConn{inner: inner, stmts: map[string]*cachedStmt{}}}, nil
}

// Connect hands out another turn-taking handle on the shared connection,
// opening it the first time (and again after a failed open).
func (c *sqliteConnector) Connect(ctx context.Context) (driver.Conn, error) {
	s := c.shared
	s.opening.Lock()
	defer s.opening.Unlock()
	if s.conn == nil {
		conn, err := s.inner.Connect(ctx)
		if err != nil {
			return nil, err
		}
		s.conn = conn
	}
	return &turnConn{s: s}, nil
}

func (c *sqliteConnector) Driver() driver.Driver { return c.shared.inner.Driver() }

// Close closes the shared connection; database/sql calls it from DB.Close,
// after closing every connection it handed out, so the turn is free.
func (c *sqliteConnector) Close() error {
	s := c.shared
	s.opening.Lock()
	defer s.opening.Unlock()
	if s.conn == nil || s.closed {
		return nil
	}
	if err := s.turns.take(context.Background()); err != nil {
		return err
	}
	defer s.turns.give()
	s.closed = true
	var errs []error
	for _, cs := range s.stmts {
		errs = append(errs, cs.stmt.Close())
	}
	s.stmts = nil
	errs = append(errs, s.conn.Close())
	return errors.Join(errs...)
}

// prepared returns the cached statement for query, or one prepared for
// this use alone (cached nil) when the cached one is busy. A full cache
// makes room by closing a statement not in use.
func (s *sharedConn) prepared(ctx context.Context, query string) (st driver.Stmt, cached *cachedStmt, err error) {
	if cs, ok := s.stmts[query]; ok && !cs.busy {
		return cs.stmt, cs, nil
	}
	st, err = s.conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, nil, err
	}
	if _, ok := s.stmts[query]; ok {
		return st, nil, nil
	}
	if len(s.stmts) >= maxCachedStmts {
		for q, cs := range s.stmts {
			if !cs.busy {
				cs.stmt.Close()
				delete(s.stmts, q)
				break
			}
		}
	}
	cs := &cachedStmt{stmt: st}
	s.stmts[query] = cs
	return st, cs, nil
}

// turnConn is one of database/sql's connections: the shared one, in turns.
// database/sql uses each from one goroutine at a time.
type turnConn struct {
	s        *sharedConn
	tx       driver.Tx // this connection's open transaction
	openRows int       // rows of this connection not closed yet
}

var (
	_ driver.Conn               = (*turnConn)(nil)
	_ driver.ConnBeginTx        = (*turnConn)(nil)
	_ driver.ConnPrepareContext = (*turnConn)(nil)
	_ driver.ExecerContext      = (*turnConn)(nil)
	_ driver.QueryerContext     = (*turnConn)(nil)
	_ driver.Pinger             = (*turnConn)(nil)
)

// holding says whether this connection holds the turn.
func (c *turnConn) holding() bool { return c.tx != nil || c.openRows > 0 }

// enter takes the turn unless this connection holds it; leave gives it back
// once nothing of this connection needs it.
func (c *turnConn) enter(ctx context.Context) error {
	if c.holding() {
		return nil
	}
	if err := c.s.turns.take(ctx); err != nil {
		return err
	}
	if c.s.closed {
		c.s.turns.give()
		return driver.ErrBadConn
	}
	return nil
}

func (c *turnConn) leave() {
	if !c.holding() {
		c.s.turns.give()
	}
}

func (c *turnConn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

func (c *turnConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if c.tx != nil {
		return nil, errors.New("sqlite: a transaction is already open on this connection")
	}
	if err := c.enter(ctx); err != nil {
		return nil, err
	}
	tx, err := c.s.conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
	if err != nil {
		c.leave()
		return nil, err
	}
	c.tx = tx
	return turnTx{c}, nil
}

type turnTx struct{ c *turnConn }

func (t turnTx) Commit() error   { return t.end(t.c.tx.Commit) }
func (t turnTx) Rollback() error { return t.end(t.c.tx.Rollback) }

func (t turnTx) end(f func() error) error {
	err := f()
	t.c.tx = nil
	t.c.leave()
	return err
}

func (c *turnConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.enter(ctx); err != nil {
		return nil, err
	}
	defer c.leave()
	st, err := c.s.conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	return &turnStmt{c: c, stmt: st}, nil
}

func (c *turnConn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

func (c *turnConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	if err := c.enter(ctx); err != nil {
		return nil, err
	}
	defer c.leave()
	st, cached, err := c.s.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	if cached == nil {
		defer st.Close()
	}
	return st.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (c *turnConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	if err := c.enter(ctx); err != nil {
		return nil, err
	}
	st, cached, err := c.s.prepared(ctx, query)
	if err != nil {
		c.leave()
		return nil, err
	}
	rows, err := st.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		if cached == nil {
			st.Close()
		}
		c.leave()
		return nil, err
	}
	if cached != nil {
		cached.busy = true
	}
	c.openRows++
	return &turnRows{Rows: rows, c: c, cached: cached, own: st}, nil
}

func (c *turnConn) Ping(ctx context.Context) error {
	if err := c.enter(ctx); err != nil {
		return err
	}
	defer c.leave()
	return c.s.conn.(driver.Pinger).Ping(ctx)
}

// Close rolls back a transaction database/sql left open (it does not, but
// the shared connection must never keep one) and gives the turn back.
func (c *turnConn) Close() error {
	if !c.holding() {
		return nil
	}
	var err error
	if c.tx != nil {
		err = c.tx.Rollback()
		c.tx = nil
	}
	c.openRows = 0
	c.leave()
	return err
}

// turnStmt is a statement a caller prepared (database/sql's Prepare).
type turnStmt struct {
	c    *turnConn
	stmt driver.Stmt
}

func (s *turnStmt) NumInput() int { return s.stmt.NumInput() }

func (s *turnStmt) Close() error {
	if err := s.c.enter(context.Background()); err != nil {
		return err
	}
	defer s.c.leave()
	return s.stmt.Close()
}

// Exec and Query are driver.Stmt's; database/sql calls the Context ones.
func (s *turnStmt) Exec(args []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), named(args))
}

func (s *turnStmt) Query(args []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), named(args))
}

func named(args []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(args))
	for i, v := range args {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: v}
	}
	return nv
}

func (s *turnStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	if err := s.c.enter(ctx); err != nil {
		return nil, err
	}
	defer s.c.leave()
	return s.stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

func (s *turnStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	if err := s.c.enter(ctx); err != nil {
		return nil, err
	}
	rows, err := s.stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
	if err != nil {
		s.c.leave()
		return nil, err
	}
	s.c.openRows++
	return &turnRows{Rows: rows, c: s.c}, nil
}

// turnRows gives the turn back when closed, and frees its statement: back
// to the cache, or closed when it was prepared for this query alone.
type turnRows struct {
	driver.Rows
	c      *turnConn
	cached *cachedStmt
	own    driver.Stmt // prepared for this query alone, closed with it; nil for a caller's statement
	closed bool
}

func (r *turnRows) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	err := r.Rows.Close()
	switch {
	case r.cached != nil:
		r.cached.busy = false
	case r.own != nil:
		if cerr := r.own.Close(); err == nil {
			err = cerr
		}
	}
	r.c.openRows--
	r.c.leave()
	return err
}

// The column type methods of modernc's rows, which database/sql's
// ColumnTypes asks for.

func (r *turnRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

func (r *turnRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

func (r *turnRows) ColumnTypeNullable(i int) (bool, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

func (r *turnRows) ColumnTypePrecisionScale(i int) (int64, int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

func (r *turnRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}

var _ io.Closer = (*sqliteConnector)(nil)
