// Package storetest opens real databases for tests: a SQLite file in a temp
// dir, or a PostgreSQL schema of its own so tests run in parallel.
package storetest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" database/sql driver for schema set-up

	"strata.dev/strata/seal"
	"strata.dev/strata/store"
	"strata.dev/strata/tooltest"
)

// PostgresEnv names the PostgreSQL server tests use.
const PostgresEnv = "STRATA_TEST_POSTGRES_URL"

// DefaultPostgres is the server on the development machines and in CI.
const DefaultPostgres = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// Dialects lists the backends every store and queue test runs against.
var Dialects = []store.Dialect{store.SQLite, store.Postgres}

// URL returns a database URL of the dialect that belongs to this test only.
// Without a reachable PostgreSQL the test skips, or fails when tools are
// required (tooltest).
func URL(t testing.TB, d store.Dialect) string {
	t.Helper()
	if d == store.SQLite {
		return "sqlite://" + filepath.Join(t.TempDir(), "strata.db")
	}
	base := os.Getenv(PostgresEnv)
	if base == "" {
		base = DefaultPostgres
	}
	db, err := sql.Open("pgx", base)
	if err == nil {
		err = db.PingContext(context.Background())
	}
	if err != nil {
		tooltest.Missing(t, "PostgreSQL at "+base, err)
	}
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "t_" + hex.EncodeToString(b)
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	t.Cleanup(func() {
		_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
		db.Close()
	})
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + "search_path=" + schema
}

// Open opens and migrates a store of the dialect for this test.
func Open(t testing.TB, d store.Dialect) *store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), URL(t, d), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.UseKeys(Keys(t))
	return st
}

// Keys returns fresh encryption keys for a test's store.
func Keys(t testing.TB) *seal.Keys {
	t.Helper()
	key := make([]byte, seal.KeySize)
	_, _ = rand.Read(key)
	k, err := seal.New(key)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// DeclareLost claims every run whose heartbeat is older than staleAfter as
// lost, each with the statements the queue's reaper runs (store.ClaimLostRun)
// but enqueueing nothing, and returns the runs it claimed: what a replica's
// reaper does to them, for tests of what follows.
func DeclareLost(t testing.TB, st *store.Store, staleAfter time.Duration) []*store.Run {
	t.Helper()
	ctx := context.Background()
	runs, err := st.LostRuns(ctx, staleAfter)
	if err != nil {
		t.Fatal(err)
	}
	var claimed []*store.Run
	for _, r := range runs {
		tx, err := st.DB().BeginTx(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		won := false
		for i, s := range st.ClaimLostRun(r.ID, staleAfter, store.RunLost, "") {
			res, err := tx.ExecContext(ctx, st.Rebind(s.SQL), s.Args...)
			if err != nil {
				tx.Rollback()
				t.Fatalf("claim lost run %d: %v", r.ID, err)
			}
			if n, _ := res.RowsAffected(); i == 0 && n == 0 {
				break
			}
			won = true
		}
		if err := tx.Commit(); err != nil {
			t.Fatal(err)
		}
		if won {
			claimed = append(claimed, r)
		}
	}
	return claimed
}
