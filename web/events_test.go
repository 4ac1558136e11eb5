package web

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/redact"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

type sse struct{ event, data string }

// readEvents parses a stream's events, skipping comments, onto a channel.
func readEvents(r io.Reader) <-chan sse {
	out := make(chan sse, 16)
	go func() {
		defer close(out)
		sc := bufio.NewScanner(r)
		var ev sse
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.event != "" {
					out <- ev
				}
				ev = sse{}
			case strings.HasPrefix(line, "event: "):
				ev.event = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return out
}

func next(t *testing.T, events <-chan sse) sse {
	t.Helper()
	select {
	case ev, ok := <-events:
		if !ok {
			t.Fatal("the stream ended")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
	}
	return sse{}
}

// A page loaded with "plan: " follows the run: it gets what is appended,
// then, the log having been masked at the end, the done event with the
// whole log; a page that loaded a finished run's log gets done alone.
func TestFollowSendsNewTextThenDone(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, store.SQLite)
	run, err := st.StartRun(ctx, store.Run{JobID: 1, Attempt: 1, Kind: "layer_plan", Repo: "acme/infra", Target: "net"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.AppendLog(ctx, run.ID, "plan: "); err != nil {
		t.Fatal(err)
	}
	run, _ = st.Run(ctx, run.ID)
	pr, pw := io.Pipe()
	events := readEvents(pr)
	f := &follower{w: pw, flush: func() error { return nil }, st: st, id: run.ID, sum: sha256.New()}
	done := make(chan error, 1)
	go func() { done <- f.follow(ctx, len(run.Log), 5*time.Millisecond, time.Hour); pw.Close() }()

	if err := st.AppendLog(ctx, run.ID, "password=hunter2\n"); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, events); ev.event != "log" || ev.data != `"password=hunter2\n"` {
		t.Fatalf("first event = %+v, want the appended text", ev)
	}
	masker, err := redact.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	masker.Add("hunter2") // as a plan masks a value it learns is sensitive
	if err := st.RewriteLog(ctx, run.ID, func(w io.Writer) io.WriteCloser { return masker.Writer(w) }); err != nil {
		t.Fatal(err)
	}
	if err := st.FinishRun(ctx, run.ID, store.RunSucceeded, "success", ""); err != nil {
		t.Fatal(err)
	}
	ev := next(t, events)
	var d struct{ Status, Conclusion, Log string }
	if ev.event != "done" || json.Unmarshal([]byte(ev.data), &d) != nil || d.Status != "succeeded" || d.Conclusion != "success" ||
		d.Log != "plan: password=[redacted]\n" {
		t.Fatalf("done event = %+v, want succeeded with the masked log", ev)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	final, _ := st.Run(ctx, run.ID)
	var b strings.Builder
	f = &follower{w: &b, flush: func() error { return nil }, st: st, id: run.ID, sum: sha256.New()}
	if err := f.follow(ctx, len(final.Log), time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	if got := b.String(); got != "event: done\ndata: {\"conclusion\":\"success\",\"status\":\"succeeded\"}\n\n" {
		t.Fatalf("stream of a finished run = %q, want done alone", got)
	}
}

func TestStreamsPerUser(t *testing.T) {
	s := newStreams()
	for i := 0; i < streamsPerUser; i++ {
		if !s.open("alice") {
			t.Fatalf("stream %d refused", i+1)
		}
	}
	if s.open("alice") || !s.open("bob") {
		t.Fatal("alice's stream past the cap opened, or bob's was refused")
	}
	s.close("alice")
	if !s.open("alice") {
		t.Fatal("a closed stream did not make room")
	}
}
