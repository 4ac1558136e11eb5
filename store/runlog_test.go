package store_test

import (
	"context"
	"io"
	"strings"
	"testing"

	"strata.dev/strata/redact"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// logStore is a store with one running run, and a count of its rows.
func logStore(t *testing.T, d store.Dialect) (*store.Store, int64, func(q string, args ...any) int) {
	t.Helper()
	st := storetest.Open(t, d)
	run, err := st.StartRun(context.Background(), store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra"})
	if err != nil {
		t.Fatal(err)
	}
	count := func(q string, args ...any) int {
		t.Helper()
		var n int
		if err := st.DB().QueryRow(st.Rebind(q), args...).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	return st, run.ID, count
}

// A plan prints batch after batch -> each is an inserted chunk (the run's
// row never holds the log, so nothing is rewritten to grow it); the log
// reads back whole, and from any byte offset, inside a chunk or not.
func TestLogIsAppendedAsChunks(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st, id, count := logStore(t, d)
			batches := []string{"Initializing…\n", "plan ✓\n", "", "Plan: 1 to add\n"}
			for i, b := range batches {
				if err := st.AppendLog(ctx, id, b); err != nil {
					t.Fatal(err)
				}
				if n, want := count(`SELECT count(*) FROM run_log_chunks WHERE run_id = ?`, id), []int{1, 2, 2, 3}[i]; n != want {
					t.Fatalf("after append %d: %d chunks, want %d", i+1, n, want)
				}
			}
			if n := count(`SELECT count(*) FROM runs WHERE id = ? AND log = ''`, id); n != 1 {
				t.Error("the run's row holds its log")
			}
			const whole = "Initializing…\nplan ✓\nPlan: 1 to add\n"
			run, err := st.Run(ctx, id)
			if err != nil || run.Log != whole {
				t.Fatalf("Run = %+v, %v; want log %q", run, err, whole)
			}
			for _, tc := range []struct {
				offset int
				text   string
			}{{0, whole}, {5, "alizing…\nplan ✓\nPlan: 1 to add\n"}, {16, "plan ✓\nPlan: 1 to add\n"}, {19, "n ✓\nPlan: 1 to add\n"}, {25, "Plan: 1 to add\n"}, {40, ""}, {500, ""}} {
				p, err := st.LogFrom(ctx, id, tc.offset)
				if err != nil || p.Text != tc.text || p.Size != 40 || p.Status != store.RunRunning || p.Cut {
					t.Errorf("LogFrom(%d) = %+v, %v; want text %q of 40 bytes", tc.offset, p, err, tc.text)
				}
			}
		})
	}
}

// A run writes past the server's limit -> the log keeps what fits, says
// once that it was cut, and drops the rest; the run's record goes on.
func TestLogIsCutAtTheLimit(t *testing.T) {
	const note = "[strata] The log is cut here: it reached 40 bytes, the most a run's log may hold (run_log_limit). The run went on.\n"
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st, id, count := logStore(t, d)
			st.LimitLogs(40)
			for range 5 {
				if err := st.AppendLog(ctx, id, "0123456789abcdefghi\n"); err != nil {
					t.Fatal(err)
				}
			}
			want := "0123456789abcdefghi\n0123456789abcdefghi\n" + "\n" + note
			if log, err := st.Log(ctx, id); err != nil || log != want {
				t.Fatalf("log = %q, %v; want %q", log, err, want)
			}
			if n := count(`SELECT count(*) FROM run_log_chunks WHERE run_id = ?`, id); n != 3 {
				t.Errorf("%d chunks, want 3 (two appends and the note)", n)
			}
			p, err := st.LogFrom(ctx, id, 40)
			if err != nil || !p.Cut || p.Text != "\n"+note || p.Size != len(want) {
				t.Errorf("LogFrom(40) = %+v, %v", p, err)
			}
			if err := st.FinishRun(ctx, id, store.RunSucceeded, "success", "planned"); err != nil {
				t.Fatal(err)
			}
			if r, err := st.Run(ctx, id); err != nil || r.Status != store.RunSucceeded || r.Log != want {
				t.Errorf("finished run = %+v, %v", r, err)
			}
		})
	}
}

// The plan marks values sensitive after its text was stored -> the
// rewrite masks them, also where one runs across two chunks, and what is
// appended after the rewrite follows it; a rewrite that masks nothing
// leaves the chunks as they are.
func TestRewriteLogMasksAcrossChunks(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st, id, count := logStore(t, d)
			for _, b := range []string{"password = \"hunter", "2-secret\"\nkey = ", strings.Repeat("k", 300<<10) + "\n"} {
				if err := st.AppendLog(ctx, id, b); err != nil {
					t.Fatal(err)
				}
			}
			masker := func(values ...string) func(io.Writer) io.WriteCloser {
				r, _ := redact.New(nil)
				r.Add(values...)
				return func(w io.Writer) io.WriteCloser { return r.Writer(w) }
			}
			seqs := func() string {
				var n, sum int
				st.DB().QueryRow(st.Rebind(`SELECT count(*), coalesce(sum(seq), 0) FROM run_log_chunks WHERE run_id = ?`), id).Scan(&n, &sum)
				return strings.Repeat("x", n) + "/" + strings.Repeat("s", sum)
			}
			before := seqs()
			if err := st.RewriteLog(ctx, id, masker("no-such-value")); err != nil {
				t.Fatal(err)
			}
			if after := seqs(); after != before {
				t.Errorf("a rewrite that masks nothing rewrote the chunks: %s, then %s", before, after)
			}

			if err := st.RewriteLog(ctx, id, masker("hunter2-secret")); err != nil {
				t.Fatal(err)
			}
			if err := st.AppendLog(ctx, id, "done\n"); err != nil {
				t.Fatal(err)
			}
			want := "password = \"[redacted]\"\nkey = " + strings.Repeat("k", 300<<10) + "\ndone\n"
			log, err := st.Log(ctx, id)
			if err != nil || log != want {
				t.Fatalf("log after the rewrite: %d bytes, %v; want %d, the value masked; it starts %q", len(log), err, len(want), log[:min(len(log), 40)])
			}
			if p, err := st.LogFrom(ctx, id, len(want)-5); err != nil || p.Text != "done\n" || p.Size != len(want) {
				t.Errorf("LogFrom after the rewrite = %q of %d, %v", p.Text, p.Size, err)
			}
			// No chunk is larger than the store's bound.
			if n := count(`SELECT count(*) FROM run_log_chunks WHERE run_id = ? AND size > ?`, id, 256<<10); n != 0 {
				t.Errorf("%d chunks over 256 KiB", n)
			}
		})
	}
}

// A log stored in the run's row before chunks existed is the run's first
// chunk after the migration: old logs still read, and follow.
func TestMigrationMovesOldLogsToChunks(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st, id, _ := logStore(t, d)
			for _, q := range []string{
				`DELETE FROM strata_migrations WHERE name = '011_run_log_chunks.sql'`,
				`DROP TABLE run_log_chunks`,
				`ALTER TABLE runs DROP COLUMN log_bytes`,
				`ALTER TABLE runs DROP COLUMN log_chunks`,
				`ALTER TABLE runs DROP COLUMN log_cut`,
			} {
				if _, err := st.DB().ExecContext(ctx, q); err != nil {
					t.Fatalf("%s: %v", q, err)
				}
			}
			if _, err := st.DB().ExecContext(ctx, st.Rebind(`UPDATE runs SET log = ?`), "old log ✓\n"); err != nil {
				t.Fatal(err)
			}
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if err := st.AppendLog(ctx, id, "new\n"); err != nil {
				t.Fatal(err)
			}
			if r, err := st.Run(ctx, id); err != nil || r.Log != "old log ✓\nnew\n" {
				t.Fatalf("run = %+v, %v", r, err)
			}
			if p, err := st.LogFrom(ctx, id, 4); err != nil || p.Text != "log ✓\nnew\n" || p.Size != 16 {
				t.Errorf("LogFrom(4) = %+v, %v", p, err)
			}
		})
	}
}

// LogSQL reads the log a query of the runs table selects, in order.
func TestLogSQL(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st, id, _ := logStore(t, d)
			for i := range 20 {
				if err := st.AppendLog(ctx, id, strings.Repeat(string(rune('a'+i)), 1+i%3)+"\n"); err != nil {
					t.Fatal(err)
				}
			}
			var log string
			if err := st.DB().QueryRow(`SELECT ` + st.LogSQL() + ` FROM runs`).Scan(&log); err != nil {
				t.Fatal(err)
			}
			if want := "a\nbb\nccc\nd\nee\nfff\ng\nhh\niii\nj\nkk\nlll\nm\nnn\nooo\np\nqq\nrrr\ns\ntt\n"; log != want {
				t.Errorf("log = %q, want %q", log, want)
			}
		})
	}
}
