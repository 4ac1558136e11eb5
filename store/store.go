// Package store keeps Strata's durable state: webhook deliveries, layer locks,
// runs with their logs, saved plans and takeovers. SQLite (embedded, the default)
// and PostgreSQL (several replicas) share one schema and one set of queries.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver, pure Go

	"strata.dev/strata/seal"
)

// Dialect names the SQL backend.
type Dialect string

const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

//go:embed migrations
var migrations embed.FS

// Store is the handle on Strata's database. Queries are written once with `?`
// placeholders and rebound for PostgreSQL.
type Store struct {
	db   *sql.DB
	pool *pgxpool.Pool // PostgreSQL only: River's pgx driver needs it
	// intake is PostgreSQL's pool for webhook intake alone (IntakePool).
	intake  *pgxpool.Pool
	dialect Dialect
	// keys seal saved plans (see plans.go); set with UseKeys.
	keys *seal.Keys
	// logLimit bounds each run's log (runlog.go); set with LimitLogs.
	logLimit int64
	// checkpoints copies SQLite's log into its file, beside the commits
	// (checkpoint.go); nil on PostgreSQL and for an in-memory database.
	checkpoints *checkpointer
}

// Open connects to the database named by rawURL: sqlite://PATH (a relative
// PATH is inside dataDir) or postgres://... . It does not migrate; call Migrate.
func Open(ctx context.Context, rawURL, dataDir string) (*Store, error) {
	switch {
	case strings.HasPrefix(rawURL, "sqlite:"):
		return openSQLite(rawURL, dataDir)
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		cfg, err := pgxpool.ParseConfig(rawURL)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		pool, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		intake, err := pgxpool.NewWithConfig(ctx, intakeConfig(cfg))
		if err != nil {
			pool.Close()
			return nil, fmt.Errorf("open postgres: %w", err)
		}
		return &Store{db: stdlib.OpenDBFromPool(pool), pool: pool, intake: intake, dialect: Postgres}, nil
	default:
		return nil, fmt.Errorf("STRATA_DATABASE_URL %q: want sqlite://PATH or postgres://...", redactURL(rawURL))
	}
}

func openSQLite(rawURL, dataDir string) (*Store, error) {
	path := strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite:"), "//")
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if path == "" {
		return nil, fmt.Errorf("STRATA_DATABASE_URL %q: missing file path", rawURL)
	}
	if path != ":memory:" && !filepath.IsAbs(path) {
		path = filepath.Join(dataDir, path)
	}
	if path != ":memory:" {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("create database directory: %w", err)
		}
	}
	dsn := sqliteDSN(path)
	connector, err := newSQLiteConnector(dsn)
	if err != nil {
		return nil, fmt.Errorf("open sqlite %s: %w", path, err)
	}
	// River's SQLite driver requires a single connection: SQLite allows one
	// writer, and River runs maintenance in parallel. Each of database/sql's
	// connections is that one, taken in turns (sqliteconn.go); the pool's
	// size is how many may wait for it.
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(sqliteHandles)
	db.SetMaxIdleConns(sqliteHandles)
	st := &Store{db: db, dialect: SQLite}
	if path != ":memory:" { // a second connection would open a database of its own
		if st.checkpoints, err = startCheckpointer(dsn); err != nil {
			db.Close()
			return nil, fmt.Errorf("open sqlite %s: %w", path, err)
		}
	}
	return st, nil
}

// sqliteDSN is the driver's name for the database file at path.
func sqliteDSN(path string) string {
	// WAL lets readers proceed during a write; busy_timeout absorbs short
	// contention; immediate transactions avoid upgrade deadlocks; a commit
	// checkpoints only past commitCheckpointPages (checkpoint.go).
	return "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate" +
		fmt.Sprintf("&_pragma=wal_autocheckpoint(%d)", commitCheckpointPages)
}

// DB is the database/sql handle, shared with the job queue.
func (s *Store) DB() *sql.DB { return s.db }

// Pool is the pgx pool on PostgreSQL, nil on SQLite.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }

// IntakePool is PostgreSQL's pool for webhook intake, nil on SQLite. A
// delivery's answer waits for its commit, and GitHub waits for the answer:
// with one pool, a burst of deliveries waited behind the workers' runs,
// heartbeats and River's fetches for a connection (issue 22, item 5).
func (s *Store) IntakePool() *pgxpool.Pool { return s.intake }

// intakeConns is the intake pool's size: one batch commits while the next
// gathers (queue/intake.go commits one batch at a time), and one spare for
// a connection PostgreSQL closed.
const intakeConns = 2

func intakeConfig(main *pgxpool.Config) *pgxpool.Config {
	cfg := main.Copy()
	cfg.MaxConns = intakeConns
	// Connected before the first delivery, not by it.
	cfg.MinConns = intakeConns
	return cfg
}

// Dialect reports the backend.
func (s *Store) Dialect() Dialect { return s.dialect }

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error { return s.db.PingContext(ctx) }

// Close closes the database.
func (s *Store) Close() error {
	var err error
	if s.checkpoints != nil {
		err = s.checkpoints.Close()
	}
	err = errors.Join(err, s.db.Close())
	if s.pool != nil {
		s.pool.Close()
	}
	if s.intake != nil {
		s.intake.Close()
	}
	return err
}

// Migrate applies Strata's own migrations that have not run yet.
func (s *Store) Migrate(ctx context.Context) error {
	dir := "migrations/" + string(s.dialect)
	entries, err := fs.ReadDir(migrations, dir)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)

	conn, err := s.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if s.dialect == Postgres {
		// Replicas starting together must not migrate twice.
		if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock(7152897)"); err != nil {
			return fmt.Errorf("migration lock: %w", err)
		}
		defer conn.ExecContext(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(7152897)")
	}
	if _, err := conn.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS strata_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
		return fmt.Errorf("create migrations table: %w", err)
	}
	for _, name := range names {
		var n int
		if err := conn.QueryRowContext(ctx, s.rebind(`SELECT count(*) FROM strata_migrations WHERE name = ?`), name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		body, err := fs.ReadFile(migrations, dir+"/"+name)
		if err != nil {
			return err
		}
		tx, err := conn.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, string(body)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migration %s: %w", name, err)
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO strata_migrations (name, applied_at) VALUES (?, ?)`), name, time.Now().UnixMilli()); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migration %s: %w", name, err)
		}
	}
	return nil
}

// rebind turns `?` placeholders into PostgreSQL's `$n`. Queries here never
// contain a literal question mark.
func (s *Store) rebind(q string) string {
	if s.dialect != Postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for _, r := range q {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Rebind exposes placeholder rebinding to packages that share a transaction.
func (s *Store) Rebind(q string) string { return s.rebind(q) }

func (s *Store) exec(ctx context.Context, q string, args ...any) (sql.Result, error) {
	return s.db.ExecContext(ctx, s.rebind(q), args...)
}

func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	return s.db.QueryRowContext(ctx, s.rebind(q), args...)
}

func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	return s.db.QueryContext(ctx, s.rebind(q), args...)
}

// redactURL hides a password in a database URL for error messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}

func now() int64 { return time.Now().UnixMilli() }

func fromMillis(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}
