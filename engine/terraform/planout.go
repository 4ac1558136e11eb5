package terraform

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"strata.dev/strata/engine/markdown"
)

// maxPlanText bounds the plan text a PlanResult holds. Its readers, the
// check (cut to GitHub's 65,535 bytes) and the comment (within the same
// budget), show a head of it; the log has it all. Twice their budget, so
// that they still cut it with their own note and link to the log.
const maxPlanText = 2 * markdown.MaxBytes

// planOutput reads plan's output as Terraform prints it, a line at a time,
// into what planText and summarizeText would make of it whole: the text's
// head, at most max bytes, and the summary. A plan that prints hundreds of
// megabytes costs a few lines of memory here, not its size.
type planOutput struct {
	max     int
	partial []byte // the line being printed
	started bool   // past the refresh's progress lines
	ended   bool   // at "Saved the plan to:": nothing follows in the text
	// held are blank and rule lines: they end the text when only the
	// note on the saved plan or nothing follows them.
	held    []string
	text    strings.Builder
	emitted bool  // a line is in the text
	bytes   int64 // the whole text's size, cut or not
	cut     bool
	sum     textSummary
}

func newPlanOutput(max int) *planOutput { return &planOutput{max: max} }

// Write takes output in any pieces; it never fails.
func (p *planOutput) Write(b []byte) (int, error) {
	n := len(b)
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			p.partial = append(p.partial, b...)
			break
		}
		if len(p.partial) > 0 {
			p.partial = append(p.partial, b[:i]...)
			p.line(string(p.partial))
			p.partial = p.partial[:0]
		} else {
			p.line(string(b[:i]))
		}
		b = b[i+1:]
	}
	return n, nil
}

func (p *planOutput) line(l string) {
	switch {
	case p.ended:
	case !p.started && isProgress(l):
	case strings.HasPrefix(l, "Saved the plan to:"):
		p.started, p.ended, p.held = true, true, nil
	case strings.TrimSpace(l) == "" || strings.Trim(l, "─") == "":
		p.started = true
		p.held = append(p.held, l)
	default:
		p.started = true
		for _, h := range p.held {
			p.emit(h)
		}
		p.held = p.held[:0]
		p.emit(l)
	}
}

func (p *planOutput) emit(l string) {
	p.sum.line(l)
	if p.emitted {
		p.add("\n")
	}
	p.emitted = true
	p.add(l)
}

func (p *planOutput) add(s string) {
	p.bytes += int64(len(s))
	if room := p.max - p.text.Len(); !p.cut && len(s) > room {
		p.text.WriteString(markdown.Head(s, room))
		p.cut = true
	} else if !p.cut {
		p.text.WriteString(s)
	}
}

// result ends the output: the text as planText makes it (cut to the
// bound, with a line that says so) and summarizeText's reading of it.
func (p *planOutput) result(hasChanges bool) (string, *PlanResult) {
	if len(p.partial) > 0 {
		p.line(string(p.partial))
		p.partial = nil
	}
	if !p.ended {
		// Trailing empty lines are not part of the text; other blank
		// lines are.
		last := len(p.held)
		for last > 0 && p.held[last-1] == "" {
			last--
		}
		for _, h := range p.held[:last] {
			p.emit(h)
		}
	}
	p.held = nil
	text := strings.TrimRight(p.text.String(), "\n") + "\n"
	if p.cut {
		text += fmt.Sprintf("\n… the plan's text goes on (%d bytes in all); see the full log\n", p.bytes+1)
	}
	return text, p.sum.result(hasChanges)
}

// textHead keeps the head of a command's output, at most max bytes, and
// counts the rest: what an apply's check shows of its output, which the
// log has whole.
type textHead struct {
	max int
	b   strings.Builder
	n   int64
}

func (h *textHead) Write(p []byte) (int, error) {
	h.n += int64(len(p))
	if room := h.max - h.b.Len(); room > 0 {
		h.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// String is the head, whole characters only, and a line saying how much
// followed.
func (h *textHead) String() string {
	s := h.b.String()
	if h.n == int64(len(s)) {
		return s
	}
	for i := 0; i < utf8.UTFMax && s != ""; i++ {
		if r, size := utf8.DecodeLastRuneInString(s); r != utf8.RuneError || size != 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return strings.TrimRight(s, "\n") + fmt.Sprintf("\n\n… the output goes on (%d bytes in all); see the full log\n", h.n)
}
