package worker

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"strata.dev/strata/redact"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// waitLog waits until the run's stored log satisfies ok, and returns it.
func waitLog(t *testing.T, st *store.Store, id int64, ok func(string) bool) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		run, err := st.Run(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if ok(run.Log) {
			return run.Log
		}
		if time.Now().After(deadline) {
			t.Fatalf("run log never came to what the test waits for; it is:\n%s", run.Log)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A tool prints lines while it runs -> the run's log holds them before it
// ends; a token and a sensitive input split across writes are stored
// masked, never in clear; Close stores the unfinished last line.
func TestLogWriterStoresLinesWhileTheToolRuns(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, store.SQLite)
	run, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan"})
	if err != nil {
		t.Fatal(err)
	}
	server, _ := redact.New(nil)
	d := &Deps{Store: st, Redactor: server}
	l := d.logWriter(ctx, func(ctx context.Context, text string) error { return st.AppendLog(ctx, run.ID, text) })
	l.Mask("sensitive-input-value")
	token := "ghp_" + strings.Repeat("A1b2C3", 6)
	has := func(s string) func(string) bool { return func(log string) bool { return strings.Contains(log, s) } }

	l.Write([]byte("Initializing the backend...\n"))
	waitLog(t, st, run.ID, has("Initializing the backend...\n"))

	for _, part := range []string{"token " + token[:10], token[10:30], token[30:] + " sensitive-in", "put-val"} {
		l.Write([]byte(part))
		l.store(false) // what a tick stores now
		if log := waitLog(t, st, run.ID, func(string) bool { return true }); strings.Contains(log, "ghp_") || strings.Contains(log, "sensitive-in") {
			t.Fatalf("the start of a secret was stored:\n%s", log)
		}
	}
	l.Write([]byte("ue done\n"))
	log := waitLog(t, st, run.ID, has("done\n"))
	if want := "Initializing the backend...\ntoken [redacted] [redacted] done\n"; log != want {
		t.Fatalf("log = %q, want %q", log, want)
	}

	l.Write([]byte("no line end"))
	l.Close()
	if log := waitLog(t, st, run.ID, func(string) bool { return true }); !strings.HasSuffix(log, "done\nno line end") {
		t.Fatalf("Close did not store the rest: %q", log)
	}
	l.Write([]byte("after Close\n"))
	l.Close()
	if log := waitLog(t, st, run.ID, func(string) bool { return true }); strings.Contains(log, "after Close") {
		t.Errorf("a write after Close was stored: %q", log)
	}
}

// Many lines printed at once -> a few writes to the store, not one a line,
// and every line stored once, in order.
func TestLogWriterBatchesLines(t *testing.T) {
	var mu sync.Mutex
	var stored []string
	server, _ := redact.New(nil)
	d := &Deps{Redactor: server}
	l := d.logWriter(context.Background(), func(_ context.Context, text string) error {
		mu.Lock()
		defer mu.Unlock()
		stored = append(stored, text)
		return nil
	})
	var want strings.Builder
	for i := range 2000 {
		line := strings.Repeat("x", i%50) + " resource line\n"
		want.WriteString(line)
		l.Write([]byte(line))
	}
	l.Close()
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(stored, ""); got != want.String() {
		t.Fatalf("stored %d bytes, want the %d written, in order", len(got), want.Len())
	}
	if len(stored) > 10 {
		t.Errorf("%d writes to the store for 2,000 lines printed at once", len(stored))
	}
	for _, s := range stored[:len(stored)-1] {
		if !strings.HasSuffix(s, "\n") {
			t.Errorf("a batch ends mid-line: %q", s[max(0, len(s)-20):])
		}
	}
}

// Outside a run the writer takes everything and stores nothing.
func TestLogWriterOutsideARunDiscards(t *testing.T) {
	l := (&Deps{}).LogWriter(context.Background())
	if n, err := l.Write([]byte("x\n")); n != 2 || err != nil {
		t.Fatalf("Write = %d, %v", n, err)
	}
	l.Mask("whatever-value")
	l.Flush()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
}
