package redact

import (
	"bytes"
	"io"
	"regexp/syntax"
	"strings"
	"sync"
)

const (
	// patternWindow is the longest pattern match the Writer finds across
	// Write calls (GitHub tokens are at most 255 bytes). A PEM block is
	// held until its END line or until maxHeld.
	patternWindow = 512
	// minChunk batches small writes, so each byte is scanned a few times,
	// not once per Write.
	minChunk = 4 << 10
	// maxHeld bounds what the Writer keeps back while waiting for the end
	// of a match; past it, text is written even if a match may be cut.
	maxHeld = 64 << 10
)

// Writer masks secrets in a stream, such as a tool's log output, including
// secrets split across Write calls. It keeps back the end of the stream
// until it cannot be the start of a secret; Flush or Close writes it.
type Writer struct {
	r  *Redactor
	w  io.Writer
	mu sync.Mutex
	// buf is input not yet written.
	buf []byte
}

// Writer returns a Writer that writes the masked stream to w.
func (r *Redactor) Writer(w io.Writer) *Writer {
	return &Writer{r: r, w: w}
}

// Write always consumes all of p; an error is the underlying writer's.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	return len(p), w.drain(false)
}

// Flush writes everything kept back. Call it at the end of the stream; a
// secret split across a Flush is not recognised.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.drain(true)
}

// Sync writes what is kept back up to the last line end, or up to the
// start of a secret that may run across it. Unlike Flush, it goes on
// recognising secrets split across it: a tool's log can be shown line by
// line while the tool still writes.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	cut := len(w.buf)
	if w.r.multiline {
		// A server pattern may match across lines: keep back as much as
		// Write does.
		cut -= patternWindow
	}
	if cut <= 0 {
		return nil
	}
	cut = bytes.LastIndexByte(w.buf[:cut], '\n') + 1
	lit := w.r.values.Load()
	// A match that reaches the end of the input so far may go on (a
	// private key block without its end line matches to the end).
	for _, p := range w.r.patterns {
		if m := p.re.FindAllIndex(w.buf, -1); len(m) > 0 && m[len(m)-1][1] == len(w.buf) {
			cut = min(cut, m[len(m)-1][0])
		}
	}
	// Only a value with a line end in it can start before cut and end
	// after the input so far.
	for _, s := range lit.values {
		if strings.IndexByte(s, '\n') < 0 {
			continue
		}
		for p := max(0, len(w.buf)-len(s)+1); p < min(cut, len(w.buf)); p++ {
			if s[:len(w.buf)-p] == string(w.buf[p:]) {
				cut = p
				break
			}
		}
	}
	if cut = w.safeCut(lit, cut); cut == 0 {
		return nil
	}
	out := w.r.String(string(w.buf[:cut]))
	w.buf = append(w.buf[:0], w.buf[cut:]...)
	_, err := io.WriteString(w.w, out)
	return err
}

// Close flushes. It does not close the underlying writer.
func (w *Writer) Close() error { return w.Flush() }

// drain writes the masked part of buf that no later input can change.
func (w *Writer) drain(all bool) error {
	lit := w.r.values.Load()
	hold := patternWindow
	if len(lit.values) > 0 && len(lit.values[0])-1 > hold {
		hold = len(lit.values[0]) - 1
	}
	cut := len(w.buf)
	if !all {
		if len(w.buf) < hold+minChunk {
			return nil
		}
		cut = w.safeCut(lit, len(w.buf)-hold)
		if cut == 0 {
			if len(w.buf) < hold+maxHeld {
				return nil
			}
			cut = len(w.buf) - hold
		}
	}
	out := w.r.String(string(w.buf[:cut]))
	w.buf = append(w.buf[:0], w.buf[cut:]...)
	_, err := io.WriteString(w.w, out)
	return err
}

// safeCut moves cut back until no secret occurrence in buf straddles it.
// Any occurrence that starts before len(buf)-hold lies wholly in buf, so
// every straddling one is seen.
func (w *Writer) safeCut(lit *literals, cut int) int {
	var matches [][]int
	for _, p := range w.r.patterns {
		matches = append(matches, p.re.FindAllIndex(w.buf, -1)...)
	}
	for {
		next := cut
		for _, m := range matches {
			if m[0] < cut && m[1] > cut {
				next = min(next, m[0])
			}
		}
		for _, s := range lit.values {
			lo := max(0, cut-len(s)+1)
			hi := min(len(w.buf), cut+len(s)-1)
			for i := lo; i < hi; {
				j := bytes.Index(w.buf[i:hi], []byte(s))
				if j < 0 {
					break
				}
				if p := i + j; p < next {
					next = p
				}
				i += j + 1
			}
		}
		if next == cut {
			return cut
		}
		cut = next
	}
}

// matchesLineEnd reports whether a match of the pattern may hold a line
// end; a pattern it cannot parse is taken to.
func matchesLineEnd(pattern string) bool {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(*syntax.Regexp) bool
	walk = func(re *syntax.Regexp) bool {
		switch re.Op {
		case syntax.OpAnyChar:
			return true
		case syntax.OpLiteral:
			return strings.ContainsRune(string(re.Rune), '\n')
		case syntax.OpCharClass:
			for i := 0; i+1 < len(re.Rune); i += 2 {
				if re.Rune[i] <= '\n' && '\n' <= re.Rune[i+1] {
					return true
				}
			}
			return false
		}
		for _, sub := range re.Sub {
			if walk(sub) {
				return true
			}
		}
		return false
	}
	return walk(re)
}
