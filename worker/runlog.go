package worker

import (
	"bytes"
	"context"
	"io"
	"sync"
	"time"

	"strata.dev/strata/redact"
)

const (
	// logFlushEvery is how long a line a tool printed waits before it is
	// stored with the lines printed meanwhile: one write to the store per
	// batch, and the run's page shows it within a second.
	logFlushEvery = 250 * time.Millisecond
	// logMaxPending bounds the masked text waiting for its batch (or for
	// the end of its line): past it, it is stored at once, while the tool
	// goes on printing.
	logMaxPending = 1 << 20
	// logMaxBacklog bounds what waits while a batch is being stored: past
	// it, the tool's writes wait for the store.
	logMaxBacklog = 4 << 20
)

// LogWriter streams a tool's output into the current run's log while the
// tool runs: the web UI shows the log as it grows. Nothing reaches the
// store before it is masked, with the server's redactor and the values
// given to Mask, in one pass that masks secrets split across writes.
// Complete lines are stored in batches; Close stores the rest. It is safe
// for concurrent writes (a tool's stdout and stderr); outside a run it
// discards what it gets.
type LogWriter struct {
	ctx       context.Context
	appendLog func(context.Context, string) error
	local     *redact.Redactor // the server's, forked: with the run's own secrets
	in        *redact.Writer   // local's Writer, writing into pending

	flushMu sync.Mutex // keeps batches in order
	mu      sync.Mutex // guards what follows, and in
	pending []byte     // masked, not stored yet
	timer   *time.Timer
	closed  bool
	storing bool // a full batch is being stored
}

// LogWriter returns a LogWriter into the current run's log; close it when
// the tool is done, before RedactLog.
func (d *Deps) LogWriter(ctx context.Context) *LogWriter {
	id := RunID(ctx)
	if id == 0 {
		return &LogWriter{}
	}
	return d.logWriter(ctx, func(ctx context.Context, text string) error { return d.Store.AppendLog(ctx, id, text) })
}

// logWriter is a LogWriter storing its batches with appendLog.
func (d *Deps) logWriter(ctx context.Context, appendLog func(context.Context, string) error) *LogWriter {
	local, _ := redact.New(nil)
	if d.Redactor != nil {
		local = d.Redactor.Fork()
	}
	l := &LogWriter{ctx: context.WithoutCancel(ctx), appendLog: appendLog, local: local}
	l.in = local.Writer(pendingText{l})
	return l
}

// pendingText collects what the redacting Writer lets through; it is
// called with mu held.
type pendingText struct{ l *LogWriter }

func (p pendingText) Write(b []byte) (int, error) {
	p.l.pending = append(p.l.pending, b...)
	return len(b), nil
}

// Mask adds values to mask from now on, in what is not stored yet too: the
// run's own secrets, such as a layer's sensitive inputs.
func (l *LogWriter) Mask(values ...string) {
	if l.local != nil {
		l.local.Add(values...)
	}
}

// Write never fails: the log is a record, and the tool's run does not
// depend on it. What is written after Close is dropped.
func (l *LogWriter) Write(p []byte) (int, error) {
	if l.appendLog == nil {
		return len(p), nil
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return len(p), nil
	}
	l.in.Write(p) // fails only as pendingText does: never
	full, backlog := len(l.pending) >= logMaxPending, len(l.pending) >= logMaxBacklog
	if !full && l.timer == nil {
		l.timer = time.AfterFunc(logFlushEvery, l.tick)
	}
	// A full batch is stored meanwhile: the tool does not wait for the
	// database unless the store falls behind by logMaxBacklog.
	async := full && !backlog && !l.storing
	if async {
		l.storing = true
	}
	l.mu.Unlock()
	switch {
	case backlog:
		l.store(false)
	case async:
		go func() {
			l.store(false)
			l.mu.Lock()
			l.storing = false
			l.mu.Unlock()
		}()
	}
	return len(p), nil
}

func (l *LogWriter) tick() {
	l.mu.Lock()
	l.timer = nil
	closed := l.closed
	l.mu.Unlock()
	if !closed {
		l.store(false)
	}
}

// Flush stores everything written so far, now. A secret split across a
// Flush is not recognised: call it between a tool's commands.
func (l *LogWriter) Flush() {
	if l.appendLog != nil {
		l.store(true)
	}
}

// Close stores the rest of the log.
func (l *LogWriter) Close() error {
	if l.appendLog == nil {
		return nil
	}
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	if l.timer != nil {
		l.timer.Stop()
		l.timer = nil
	}
	l.mu.Unlock()
	l.store(true)
	return nil
}

// store appends the complete lines masked so far to the run's log, or
// everything when all is set or too much waits.
func (l *LogWriter) store(all bool) {
	l.flushMu.Lock()
	defer l.flushMu.Unlock()
	l.mu.Lock()
	sync := (*redact.Writer).Sync
	if all {
		sync = (*redact.Writer).Flush
	}
	sync(l.in)
	n := len(l.pending)
	if !all && n < logMaxPending {
		n = bytes.LastIndexByte(l.pending, '\n') + 1
	}
	text := string(l.pending[:n])
	l.pending = append(l.pending[:0], l.pending[n:]...)
	l.mu.Unlock()
	if text != "" {
		Warn(l.ctx, l.appendLog(l.ctx, text), "append to the run's log")
	}
}

// MaskLog masks values in the run's stored log: for a log stored before
// the job knew every value to mask (a plan's sensitive values). The store
// streams the log through the masker a chunk at a time, so a large log
// costs linear time, and a value split between chunks is masked too.
func (d *Deps) MaskLog(ctx context.Context, values ...string) {
	id := RunID(ctx)
	if id == 0 || len(values) == 0 {
		return
	}
	local, _ := redact.New(nil)
	local.Add(values...)
	mask := func(w io.Writer) io.WriteCloser { return local.Writer(w) }
	Warn(ctx, d.Store.RewriteLog(context.WithoutCancel(ctx), id, mask), "mask the run's log")
}
