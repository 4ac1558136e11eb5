package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"strata.dev/strata/store"
)

// A run's event stream (Server-Sent Events) follows its log in the store,
// where any replica's run writes it: "log" events carry new text, one
// "done" event the outcome, with the whole log when it was rewritten since
// (values masked at the end of a plan), as static/strata.js expects.
const (
	streamKeepAlive = 15 * time.Second
	streamMaxAge    = time.Hour
	// streamsPerUser bounds one user's open streams, each a connection and
	// a store read per poll.
	streamsPerUser = 8
)

func (u *UI) runEvents(w http.ResponseWriter, r *http.Request) {
	v, run, _, ok := u.pathRun(w, r)
	if !ok {
		return
	}
	from, err := strconv.Atoi(r.URL.Query().Get("from"))
	if err != nil || from < 0 {
		from = 0
	}
	if !u.streams.open(v.Login) {
		http.Error(w, "too many live logs open; close some pages", http.StatusTooManyRequests)
		return
	}
	defer u.streams.close(v.Login)
	// The server's deadlines are for ordinary requests (app/http.go).
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	_ = rc.SetReadDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("X-Accel-Buffering", "no") // a proxy must not hold events back
	w.WriteHeader(http.StatusOK)
	ctx, cancel := context.WithTimeout(r.Context(), streamMaxAge)
	defer cancel()
	f := &follower{w: w, flush: rc.Flush, st: u.opts.Deps.Store, id: run.ID, sum: sha256.New()}
	if err := f.follow(ctx, from, u.opts.LogPoll, streamKeepAlive); err != nil && ctx.Err() == nil {
		u.opts.Log.Warn().Err(err).Int64("run", run.ID).Msg("web UI: a run's event stream ended")
	}
}

// follower sends one run's log as it grows.
type follower struct {
	w     io.Writer
	flush func() error
	st    *store.Store
	id    int64
	// sent is how much of the log the page has; sum hashes it, so the end
	// can tell whether the log was rewritten under it.
	sent int
	sum  hash.Hash
	// tail is the end of what was sent: a rewrite that moved it shows at
	// once, any other at the end, by sum.
	tail      string
	rewritten bool
}

// follow sends what the log gains beyond from, until the run ends (then a
// done event), ctx ends, or writing fails. Each look reads only what
// follows the end of what was sent (from the tail on, to see a rewrite).
func (f *follower) follow(ctx context.Context, from int, poll, keepAlive time.Duration) error {
	// What the page has, read a chunk at a time: a log of tens of MB is
	// never held here.
	if err := f.st.WriteLog(ctx, f.id, &hadWriter{f: f, left: from}); err != nil && !errors.Is(err, errHadAll) {
		return err
	}
	part, err := f.st.LogFrom(ctx, f.id, f.sent-len(f.tail))
	if err != nil {
		return err
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	alive := time.NewTicker(keepAlive)
	defer alive.Stop()
	for {
		if err := f.send(ctx, part); err != nil || part.Status != store.RunRunning {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-alive.C:
			if err := f.event(": keep-alive\n\n"); err != nil {
				return err
			}
			continue
		case <-ticker.C:
		}
		next, err := f.st.LogFrom(ctx, f.id, f.sent-len(f.tail))
		if err != nil {
			return err
		}
		part = next
	}
}

// send sends the log's new text, and the done event once the run ended;
// part holds the log from the start of the sent tail on.
func (f *follower) send(ctx context.Context, part store.LogPart) error {
	// The log only grows while the run runs, unless it is rewritten; then
	// the page gets the whole log at the end.
	if part.Size < f.sent || !strings.HasPrefix(part.Text, f.tail) {
		f.rewritten = true
	}
	if !f.rewritten && part.Size > f.sent {
		text := part.Text[len(f.tail):]
		data, _ := json.Marshal(text)
		if err := f.event("event: log\ndata: " + string(data) + "\n\n"); err != nil {
			return err
		}
		f.sentText(text)
		f.sent = part.Size
	}
	if part.Status == store.RunRunning {
		return nil
	}
	// The end: the whole log, once, says whether it was rewritten under
	// what was sent.
	run, err := f.st.Run(ctx, f.id)
	if err != nil {
		return err
	}
	done := map[string]string{"status": run.Status, "conclusion": run.Conclusion}
	if f.rewritten || !f.sameAsSent(run.Log) {
		done["log"] = run.Log
	}
	data, _ := json.Marshal(done)
	return f.event("event: done\ndata: " + string(data) + "\n\n")
}

// hadWriter records the first left bytes of the log as sent: what the
// page loaded.
type hadWriter struct {
	f    *follower
	left int
}

// errHadAll stops reading the log once what the page has is read.
var errHadAll = errors.New("read what the page has")

func (h *hadWriter) Write(p []byte) (int, error) {
	n := min(len(p), h.left)
	h.f.sentText(string(p[:n]))
	h.f.sent += n
	h.left -= n
	if h.left == 0 {
		return n, errHadAll
	}
	return n, nil
}

// sentText records text as sent.
func (f *follower) sentText(text string) {
	io.WriteString(f.sum, text)
	if len(text) >= tailLen {
		f.tail = strings.Clone(text[len(text)-tailLen:])
	} else {
		f.tail = (f.tail + text)[max(0, len(f.tail)+len(text)-tailLen):]
	}
}

const tailLen = 64

// sameAsSent reports whether log starts with what was sent.
func (f *follower) sameAsSent(log string) bool {
	if len(log) < f.sent {
		return false
	}
	h := sha256.Sum256([]byte(log[:f.sent]))
	return bytes.Equal(h[:], f.sum.Sum(nil))
}

func (f *follower) event(s string) error {
	if _, err := io.WriteString(f.w, s); err != nil {
		return err
	}
	if err := f.flush(); err != nil {
		return fmt.Errorf("flush an event: %w", err)
	}
	return nil
}

// streams counts each user's open event streams.
type streams struct {
	mu sync.Mutex
	n  map[string]int
}

func newStreams() *streams { return &streams{n: map[string]int{}} }

func (s *streams) open(login string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[login] >= streamsPerUser {
		return false
	}
	s.n[login]++
	return true
}

func (s *streams) close(login string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.n[login]--; s.n[login] <= 0 {
		delete(s.n, login)
	}
}
