package store

import (
	"database/sql"
	"time"
)

// SQLite's write-ahead log is copied back into the database file by a
// checkpoint. Left to itself, SQLite runs one inside the commit that takes
// the log past 1,000 pages: that commit, and every webhook waiting behind
// it on the one connection, then waits for a thousand page writes. Under a
// burst of deliveries that was several times a second (issue 22, item 5;
// docs/benchmarks.md, the sixth look). So a connection of its own
// checkpoints every checkpointEvery, beside the commits instead of inside
// them, and a commit checkpoints only when the log has grown past
// commitCheckpointPages: when the checkpointer fell behind or failed, the
// log still has a bound.
const (
	checkpointEvery       = 100 * time.Millisecond
	commitCheckpointPages = 10000 // 40 MB of 4 kB pages
)

// checkpointer runs SQLite's checkpoints on a connection of its own, one
// at each tick, until it is closed.
type checkpointer struct {
	db       *sql.DB
	stopTick func()
	stop     chan struct{}
	done     chan struct{}
}

// startCheckpointer checkpoints the database of dsn every checkpointEvery.
func startCheckpointer(dsn string) (*checkpointer, error) {
	t := time.NewTicker(checkpointEvery)
	c, err := newCheckpointer(dsn, t.C)
	if err != nil {
		t.Stop()
		return nil, err
	}
	c.stopTick = t.Stop
	return c, nil
}

// newCheckpointer checkpoints the database of dsn at each tick: a test's
// own channel ticks when the test says, and a second send returns once the
// first tick's checkpoint is done.
func newCheckpointer(dsn string, tick <-chan time.Time) (*checkpointer, error) {
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	c := &checkpointer{db: db, stopTick: func() {}, stop: make(chan struct{}), done: make(chan struct{})}
	go c.run(tick)
	return c, nil
}

func (c *checkpointer) run(tick <-chan time.Time) {
	defer close(c.done)
	for {
		select {
		case <-c.stop:
			return
		case <-tick:
			// PASSIVE copies what no reader still needs and never waits for,
			// nor blocks, a writer or a reader. An error (the file gone, the
			// disk full) is the commits' to report: they write the same file,
			// and they checkpoint themselves past commitCheckpointPages.
			_, _ = c.db.Exec("PRAGMA wal_checkpoint(PASSIVE)")
		}
	}
}

// Close stops the checkpoints and closes their connection.
func (c *checkpointer) Close() error {
	c.stopTick()
	close(c.stop)
	<-c.done
	return c.db.Close()
}
