package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A commit leaves SQLite's log alone, so a webhook's commit never waits
// for a checkpoint; the checkpointer copies the log into the database file
// beside the commits.
func TestCheckpointsRunBesideTheCommits(t *testing.T) {
	path := filepath.Join(t.TempDir(), "strata.db")
	st, err := Open(context.Background(), "sqlite://"+path, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	// The test ticks the checkpointer itself.
	if err := st.checkpoints.Close(); err != nil {
		t.Fatal(err)
	}
	st.checkpoints = nil
	tick := make(chan time.Time)
	c, err := newCheckpointer(sqliteDSN(path), tick)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// 2,000 pages of 4 kB in 200 commits: twice SQLite's own threshold
	// (1,000 pages), a fifth of ours.
	db := st.DB()
	if _, err := db.Exec(`CREATE TABLE filler (b BLOB)`); err != nil {
		t.Fatal(err)
	}
	row := strings.Repeat("x", 40<<10)
	for range 200 {
		if _, err := db.Exec(`INSERT INTO filler (b) VALUES (?)`, row); err != nil {
			t.Fatal(err)
		}
	}
	const written = 200 * 40 << 10
	if size := fileSize(t, path); size >= written {
		t.Fatalf("the database file is %d bytes after the commits alone: a commit checkpointed", size)
	}
	if size := fileSize(t, path+"-wal"); size < written {
		t.Fatalf("the log is %d bytes, want the %d bytes committed", size, written)
	}

	tick <- time.Now()
	tick <- time.Now() // returns once the first tick's checkpoint is done
	if size := fileSize(t, path); size < written {
		t.Fatalf("the database file is %d bytes after a checkpoint, want the %d bytes committed", size, written)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM filler`).Scan(&n); err != nil || n != 200 {
		t.Fatalf("rows after the checkpoint = %d, %v; want 200", n, err)
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
