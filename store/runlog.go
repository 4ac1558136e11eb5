package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

const (
	// DefaultLogLimit is how many bytes a run's log may hold unless the
	// server says otherwise (run_log_limit): a plan that prints more is
	// cut, not stored whole.
	DefaultLogLimit = 64 << 20
	// logChunkMax bounds one stored chunk, so that reading, following or
	// rewriting a log holds one chunk at a time, whatever a writer appends.
	logChunkMax = 256 << 10
)

// LimitLogs sets the most bytes a run's log may hold; 0 or less means the
// default.
func (s *Store) LimitLogs(n int64) {
	if n <= 0 {
		n = DefaultLogLimit
	}
	s.logLimit = n
}

func (s *Store) logLimitOrDefault() int64 {
	if s.logLimit <= 0 {
		return DefaultLogLimit
	}
	return s.logLimit
}

// logCut decides what a run's log keeps of text appended to size bytes
// under limit: all of it when it fits; past the limit, the head that fits
// and the note that says the log was cut (once: cut says it was written);
// nothing after that.
func logCut(size, limit int64, cut bool, text string) (keep string, nowCut bool) {
	switch {
	case cut:
		return "", true
	case size+int64(len(text)) <= limit:
		return text, false
	}
	head := text[:max(limit-size, 0)]
	for len(head) > 0 && !utf8.ValidString(head[max(len(head)-utf8.UTFMax, 0):]) {
		head = head[:len(head)-1] // never half a character
	}
	if !strings.HasSuffix(head, "\n") {
		head += "\n" // the note on a line of its own
	}
	return head + fmt.Sprintf("[strata] The log is cut here: it reached %d bytes, the most a run's log may hold (run_log_limit). The run went on.\n", limit), true
}

// AppendLog adds text to a run's log, as new chunks: the log is never
// rewritten to grow. Past the server's limit the log says it was cut, and
// what follows is dropped; the run goes on. The text must already be
// redacted.
func (s *Store) AppendLog(ctx context.Context, id int64, text string) error {
	if text == "" {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	q := `SELECT log_bytes, log_chunks, log_cut FROM runs WHERE id = ?`
	if s.dialect == Postgres {
		q += ` FOR UPDATE` // a run's writers append in turn
	}
	var size, chunks int64
	var cut bool
	if err := tx.QueryRowContext(ctx, s.rebind(q), id).Scan(&size, &chunks, &cut); errors.Is(err, sql.ErrNoRows) {
		return nil
	} else if err != nil {
		return fmt.Errorf("append to the log of run %d: %w", id, err)
	}
	keep, nowCut := logCut(size, s.logLimitOrDefault(), cut, text)
	if keep == "" {
		return nil
	}
	size, chunks, err = s.insertChunks(ctx, tx, id, size, chunks, keep)
	if err != nil {
		return fmt.Errorf("append to the log of run %d: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE runs SET log_bytes = ?, log_chunks = ?, log_cut = ? WHERE id = ?`),
		size, chunks, nowCut, id); err != nil {
		return fmt.Errorf("append to the log of run %d: %w", id, err)
	}
	return tx.Commit()
}

// insertChunks stores text as the chunks that follow seq, from byte offset
// start on, and returns where the log then ends.
func (s *Store) insertChunks(ctx context.Context, tx *sql.Tx, id, start, seq int64, text string) (int64, int64, error) {
	for text != "" {
		n := len(text)
		if n > logChunkMax {
			n = logChunkMax
			for n > 0 && !utf8.RuneStart(text[n]) {
				n--
			}
		}
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO run_log_chunks (run_id, seq, start, size, text) VALUES (?, ?, ?, ?, ?)`),
			id, seq, start, n, text[:n]); err != nil {
			return start, seq, err
		}
		start, seq, text = start+int64(n), seq+1, text[n:]
	}
	return start, seq, nil
}

// WriteLog writes a run's log to w, a chunk at a time.
func (s *Store) WriteLog(ctx context.Context, id int64, w io.Writer) error {
	var end logEnd
	if err := s.queryRow(ctx, `SELECT log_chunks, log_bytes FROM runs WHERE id = ?`, id).Scan(&end.chunks, &end.bytes); errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	} else if err != nil {
		return err
	}
	return s.eachChunk(ctx, s.db, id, end, 0, func(text string) error {
		_, err := io.WriteString(w, text)
		return err
	})
}

// Log returns a run's whole log. Readers of a log that may be large write
// it somewhere with WriteLog instead.
func (s *Store) Log(ctx context.Context, id int64) (string, error) {
	var b strings.Builder
	err := s.WriteLog(ctx, id, &b)
	return b.String(), err
}

// logEnd is where a run's log ended when its record was read: chunks
// stored since are not read with it.
type logEnd struct{ chunks, bytes int64 }

// querier is what reads a log: the database, or a transaction that
// rewrites it.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// eachChunk calls fn with a run's log from byte offset on, up to end, a
// chunk at a time. Chunks are read a batch at a time, and no rows are open
// while fn runs: fn may write to the database.
func (s *Store) eachChunk(ctx context.Context, db querier, id int64, end logEnd, offset int64, fn func(string) error) error {
	const batch = 16
	seq := int64(-1)
	for {
		rows, err := db.QueryContext(ctx, s.rebind(`SELECT seq, start, text FROM run_log_chunks
			WHERE run_id = ? AND seq > ? AND seq < ? AND start < ? AND start + size > ? ORDER BY seq LIMIT ?`),
			id, seq, end.chunks, end.bytes, offset, batch)
		if err != nil {
			return err
		}
		var texts []string
		for rows.Next() {
			var start int64
			var text string
			if err := rows.Scan(&seq, &start, &text); err != nil {
				rows.Close()
				return err
			}
			if start < offset {
				text = text[offset-start:]
			}
			texts = append(texts, text)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for _, t := range texts {
			if err := fn(t); err != nil {
				return err
			}
		}
		if len(texts) < batch {
			return nil
		}
	}
}

// RewriteLog replaces a run's log with what mask makes of it, a stream
// masker (redact.Writer) writing into the writer it is given: a log stored
// before every value to mask was known, masked again. It reads and writes a
// chunk at a time, whatever the log's size, and leaves the log alone when
// nothing changed. Only the run's own job writes its log, so nothing is
// appended in between.
func (s *Store) RewriteLog(ctx context.Context, id int64, mask func(io.Writer) io.WriteCloser) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var end logEnd
	if err := tx.QueryRowContext(ctx, s.rebind(`SELECT log_chunks, log_bytes FROM runs WHERE id = ?`), id).Scan(&end.chunks, &end.bytes); err != nil {
		return fmt.Errorf("rewrite the log of run %d: %w", id, err)
	}
	chunks := end.chunks
	// The new chunks follow the old ones, which are then deleted.
	out := &chunkWriter{ctx: ctx, s: s, tx: tx, id: id, seq: chunks}
	in := &sameAs{}
	m := mask(io.MultiWriter(out, in))
	err = s.eachChunk(ctx, tx, id, end, 0, func(text string) error {
		in.read(text)
		_, err := io.WriteString(m, text)
		return err
	})
	if err == nil {
		err = m.Close()
	}
	if err == nil {
		err = out.flush()
	}
	if err != nil {
		return fmt.Errorf("rewrite the log of run %d: %w", id, err)
	}
	if in.same() {
		return nil // the rollback drops the copy
	}
	if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM run_log_chunks WHERE run_id = ? AND seq < ?`), id, chunks); err != nil {
		return err
	}
	// Appends after the rewrite follow its chunks.
	if _, err := tx.ExecContext(ctx, s.rebind(`UPDATE runs SET log_bytes = ?, log_chunks = ? WHERE id = ?`),
		out.start, out.seq, id); err != nil {
		return err
	}
	return tx.Commit()
}

// chunkWriter stores what is written to it as new chunks of a run's log,
// each at most logChunkMax; start is relative to the log's new start.
type chunkWriter struct {
	ctx        context.Context
	s          *Store
	tx         *sql.Tx
	id         int64
	seq, start int64
	buf        []byte
}

func (w *chunkWriter) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for len(w.buf) >= logChunkMax {
		n := logChunkMax
		for n > 0 && !utf8.RuneStart(w.buf[n]) {
			n--
		}
		if err := w.store(n); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

func (w *chunkWriter) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	return w.store(len(w.buf))
}

func (w *chunkWriter) store(n int) error {
	start, seq, err := w.s.insertChunks(w.ctx, w.tx, w.id, w.start, w.seq, string(w.buf[:n]))
	w.start, w.seq = start, seq
	w.buf = append(w.buf[:0], w.buf[n:]...)
	return err
}

// sameAs tells whether the stream written to it is the one read: the
// masked log against the log.
type sameAs struct {
	pending []byte // read, not yet matched by what was written
	differ  bool
}

func (c *sameAs) read(text string) { c.pending = append(c.pending, text...) }

func (c *sameAs) Write(p []byte) (int, error) {
	switch {
	case c.differ:
	case len(p) > len(c.pending) || string(c.pending[:len(p)]) != string(p):
		c.differ = true
		c.pending = nil
	default:
		c.pending = append(c.pending[:0], c.pending[len(p):]...)
	}
	return len(p), nil
}

func (c *sameAs) same() bool { return !c.differ && len(c.pending) == 0 }

// LogPart is a run's state and its log from a byte offset on.
type LogPart struct {
	Status, Conclusion string
	// Size is the whole log's length in bytes.
	Size int
	// Cut says the log reached the server's limit and says so.
	Cut bool
	// Text is the log from the offset asked on.
	Text string
}

// LogFrom reads a run's state and its log from byte offset on: a reader
// that follows a growing log (the web UI's live log) reads the chunks past
// what it has, not the whole log again at every look.
func (s *Store) LogFrom(ctx context.Context, id int64, offset int) (LogPart, error) {
	var p LogPart
	var end logEnd
	err := s.queryRow(ctx, `SELECT status, conclusion, log_chunks, log_bytes, log_cut FROM runs WHERE id = ?`, id).
		Scan(&p.Status, &p.Conclusion, &end.chunks, &end.bytes, &p.Cut)
	if errors.Is(err, sql.ErrNoRows) {
		return LogPart{}, ErrNotFound
	}
	if err != nil {
		return LogPart{}, err
	}
	var b strings.Builder
	p.Size = int(end.bytes)
	err = s.eachChunk(ctx, s.db, id, end, int64(max(offset, 0)), func(text string) error {
		b.WriteString(text)
		return nil
	})
	p.Text = b.String()
	return p, err
}

// LogSQL is a run's whole log as an SQL expression over the runs table,
// for tests and benchmarks that read logs in their own queries.
func (s *Store) LogSQL() string {
	if s.dialect == Postgres {
		return `coalesce((SELECT string_agg(c.text, '' ORDER BY c.seq) FROM run_log_chunks c WHERE c.run_id = runs.id), '')`
	}
	return `coalesce((SELECT group_concat(c.text, '' ORDER BY c.seq) FROM run_log_chunks c WHERE c.run_id = runs.id), '')`
}
