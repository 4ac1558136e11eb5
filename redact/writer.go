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
	lit := w.r.lits()
	// A match that reaches the end of the input so far may go on (a
	// private key block without its end line matches to the end).
	var matches [][]int
	for _, p := range w.r.patterns {
		m := p.re.FindAllIndex(w.buf, -1)
		if len(m) > 0 && m[len(m)-1][1] == len(w.buf) {
			cut = min(cut, m[len(m)-1][0])
		}
		matches = append(matches, m...)
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
	if cut = w.safeCut(lit, cut, matches); cut == 0 {
		return nil
	}
	return w.emit(lit, cut, matches)
}

// Close flushes. It does not close the underlying writer.
func (w *Writer) Close() error { return w.Flush() }

// drain writes the masked part of buf that no later input can change.
func (w *Writer) drain(all bool) error {
	lit := w.r.lits()
	hold := patternWindow
	if len(lit.values) > 0 && len(lit.values[0])-1 > hold {
		hold = len(lit.values[0]) - 1
	}
	if !all && len(w.buf) < hold+minChunk {
		return nil
	}
	matches := w.matches()
	cut := len(w.buf)
	if !all {
		cut = w.safeCut(lit, len(w.buf)-hold, matches)
		if cut == 0 {
			if len(w.buf) < hold+maxHeld {
				return nil
			}
			cut = len(w.buf) - hold
		}
	}
	return w.emit(lit, cut, matches)
}

// matches are the patterns' matches in buf.
func (w *Writer) matches() [][]int {
	var all [][]int
	for _, p := range w.r.patterns {
		all = append(all, p.re.FindAllIndex(w.buf, -1)...)
	}
	return all
}

// emit writes buf[:cut] masked and keeps the rest; matches are the
// patterns' in the whole of buf. A text with no secret in it, which is
// nearly every one, goes out as it is, neither copied nor scanned again.
func (w *Writer) emit(lit *literals, cut int, matches [][]int) error {
	text := w.buf[:cut]
	var err error
	if w.clean(lit, text, matches) {
		_, err = w.w.Write(text)
	} else {
		_, err = io.WriteString(w.w, w.r.String(string(text)))
	}
	w.buf = append(w.buf[:0], w.buf[cut:]...)
	return err
}

// clean reports whether String would leave text, a head of buf, as it is.
// A pattern that matches in text matches in buf, where it starts before
// len(text), unless it asserts something about the text's end (a word
// boundary, `$`, `\z`), which a head of buf may fake: those are asked
// about text itself.
func (w *Writer) clean(lit *literals, text []byte, matches [][]int) bool {
	for _, m := range matches {
		if m[0] < len(text) {
			return false
		}
	}
	for _, p := range w.r.patterns {
		if p.atEnd && p.re.Match(text) {
			return false
		}
	}
	i, _ := next(lit, text, 0)
	return i < 0
}

// safeCut moves cut back until no secret occurrence in buf straddles it;
// matches are the patterns' in buf. Any occurrence that starts before
// len(buf)-hold lies wholly in buf, so every straddling one is seen.
func (w *Writer) safeCut(lit *literals, cut int, matches [][]int) int {
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

// assertsEnd reports whether a pattern looks at what follows a match or at
// the text's end (`$`, `\z`, `\b`, `\B`).
func assertsEnd(pattern string) bool {
	return anyNode(pattern, func(re *syntax.Regexp) bool {
		switch re.Op {
		case syntax.OpEndLine, syntax.OpEndText, syntax.OpWordBoundary, syntax.OpNoWordBoundary:
			return true
		}
		return false
	})
}

// matchesLineEnd reports whether a match of the pattern may hold a line
// end.
func matchesLineEnd(pattern string) bool {
	return anyNode(pattern, func(re *syntax.Regexp) bool {
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
		}
		return false
	})
}

// anyNode reports whether a node of the pattern's syntax tree satisfies
// is; a pattern it cannot parse is taken to have one.
func anyNode(pattern string, is func(*syntax.Regexp) bool) bool {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return true
	}
	var walk func(*syntax.Regexp) bool
	walk = func(re *syntax.Regexp) bool {
		if is(re) {
			return true
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
