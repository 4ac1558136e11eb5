package store_test

import (
	"context"
	"errors"
	"net/url"
	"testing"
	"time"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// skewedPostgres opens a store on PostgreSQL whose clock runs an hour behind
// this process's: the test process is a replica whose clock is an hour
// ahead. (clock_timestamp is shadowed in the test's schema, which comes
// before pg_catalog in its search_path.) SQLite has no second replica to
// disagree with.
func skewedPostgres(t *testing.T) *store.Store {
	t.Helper()
	u, err := url.Parse(storetest.URL(t, store.Postgres))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", q.Get("search_path")+",pg_catalog")
	u.RawQuery = q.Encode()
	st, err := store.Open(context.Background(), u.String(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := st.DB().Exec(`CREATE FUNCTION clock_timestamp() RETURNS timestamptz LANGUAGE sql
		AS $$ SELECT pg_catalog.clock_timestamp() - interval '1 hour' $$`); err != nil {
		t.Fatal(err)
	}
	return st
}

func dbMillis(t *testing.T, st *store.Store) int64 {
	t.Helper()
	var ms int64
	if err := st.DB().QueryRow(`SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint`).Scan(&ms); err != nil {
		t.Fatal(err)
	}
	return ms
}

// Replicas whose clocks disagree -> leases are stamped and judged by the
// database's clock alone: a replica whose clock runs an hour ahead does not
// declare lost (and retry beside it) a run another replica renewed just now,
// and its own heartbeats are on the database's clock too.
func TestLeasesUseTheDatabasesClock(t *testing.T) {
	st := skewedPostgres(t)
	ctx := context.Background()

	other, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra", Target: "network"})
	if err != nil {
		t.Fatal(err)
	}
	// Renewed just now by a replica whose clock is the database's.
	if _, err := st.DB().Exec(`UPDATE runs SET heartbeat_at = (extract(epoch FROM clock_timestamp()) * 1000)::bigint WHERE id = $1`, other.ID); err != nil {
		t.Fatal(err)
	}
	lost, err := st.LostRuns(ctx, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(lost) != 0 {
		t.Fatalf("a run renewed just now was declared lost by a replica whose clock runs ahead: %+v", lost[0])
	}

	mine, err := st.StartRun(ctx, store.Run{JobID: 2, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra", Target: "dns"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Heartbeat(ctx, mine.ID); err != nil {
		t.Fatal(err)
	}
	got, err := st.Run(ctx, mine.ID)
	if err != nil {
		t.Fatal(err)
	}
	for what, at := range map[string]time.Time{"started_at": got.StartedAt, "heartbeat_at": got.HeartbeatAt} {
		if skew := time.Duration(at.UnixMilli()-dbMillis(t, st)) * time.Millisecond; skew.Abs() > time.Minute {
			t.Errorf("%s is %s off the database's clock: stamped by this replica's", what, skew)
		}
	}

	// Silent for half an hour by the database's clock: lost.
	if _, err := st.DB().Exec(`UPDATE runs SET heartbeat_at = heartbeat_at - 1800000 WHERE id = $1`, mine.ID); err != nil {
		t.Fatal(err)
	}
	lost = storetest.DeclareLost(t, st, 10*time.Minute)
	if len(lost) != 1 || lost[0].ID != mine.ID {
		t.Fatalf("claimed %v; want run %d, silent for 30 minutes", lost, mine.ID)
	}
}

// A run another replica already declared lost -> renewing its lease fails
// with ErrRunEnded, so its worker stops at once.
func TestHeartbeatOfALostRunFails(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			st := storetest.Open(t, d)
			ctx := context.Background()
			run, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra"})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.Heartbeat(ctx, run.ID); err != nil {
				t.Fatalf("heartbeat of a running run: %v", err)
			}
			if lost := storetest.DeclareLost(t, st, -time.Second); len(lost) != 1 {
				t.Fatalf("declared %d runs lost, want 1", len(lost))
			}
			if err := st.Heartbeat(ctx, run.ID); !errors.Is(err, store.ErrRunEnded) {
				t.Fatalf("heartbeat of a lost run = %v, want ErrRunEnded", err)
			}
		})
	}
}

// A run records the check it reports to and, once the check completes, its
// conclusion, which the end of the job keeps.
func TestRunRecordsItsCheckAndConclusion(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			r, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra", PR: 1, Target: "net"})
			if err != nil {
				t.Fatal(err)
			}
			if err := st.SetRunCheck(ctx, r.ID, 42, ""); err != nil {
				t.Fatal(err)
			}
			if err := st.SetRunCheck(ctx, r.ID, 42, "failure"); err != nil {
				t.Fatal(err)
			}
			if err := st.SetRunCheck(ctx, r.ID, 42, ""); err != nil { // an update without a conclusion keeps it
				t.Fatal(err)
			}
			got, err := st.Run(ctx, r.ID)
			if err != nil || got.CheckRunID != 42 || got.Conclusion != "failure" {
				t.Fatalf("run = %+v, %v; want check 42, conclusion failure", got, err)
			}
			// The same attempt started again is the same run.
			again, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra", PR: 1, Target: "net"})
			if err != nil || again.ID != r.ID || again.CheckRunID != 42 {
				t.Fatalf("second start of the attempt = %+v, %v; want run %d", again, err, r.ID)
			}
			// The job's end keeps the worker's conclusion and fills the
			// empty summary.
			if err := st.FinishRun(ctx, r.ID, store.RunSucceeded, "success", "ended"); err != nil {
				t.Fatal(err)
			}
			got, err = st.Run(ctx, r.ID)
			if err != nil || got.Status != store.RunSucceeded || got.Conclusion != "failure" || got.Summary != "ended" || got.FinishedAt.IsZero() {
				t.Fatalf("finished run = %+v, %v; want succeeded, conclusion failure kept, summary ended", got, err)
			}
			// A finished run is not finished again.
			if err := st.FinishRun(ctx, r.ID, store.RunFailed, "", "other"); err != nil {
				t.Fatal(err)
			}
			if got, err = st.Run(ctx, r.ID); err != nil || got.Status != store.RunSucceeded || got.Summary != "ended" {
				t.Fatalf("run finished twice = %+v, %v; want the first end kept", got, err)
			}
		})
	}
}

// A follower of a growing log reads what follows an offset, in bytes, as
// the log holds them (multi-byte characters included).
func TestLogFrom(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			r, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra"})
			if err != nil {
				t.Fatal(err)
			}
			first := "Initializing… ✓\n"
			for _, text := range []string{first, "Plan: 1 to add\n"} {
				if err := st.AppendLog(ctx, r.ID, text); err != nil {
					t.Fatal(err)
				}
			}
			whole := first + "Plan: 1 to add\n"
			for _, off := range []int{0, len(first), len(whole)} {
				p, err := st.LogFrom(ctx, r.ID, off)
				if err != nil || p.Status != store.RunRunning || p.Size != len(whole) || p.Text != whole[off:] {
					t.Errorf("LogFrom(%d) = %+v, %v; want size %d and %q", off, p, err, len(whole), whole[off:])
				}
			}
			if _, err := st.LogFrom(ctx, r.ID+100, 0); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("a missing run: %v, want ErrNotFound", err)
			}
		})
	}
}
