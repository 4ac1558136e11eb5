package markdown

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestFenceOutlastsBackticksInTheText(t *testing.T) {
	if f := Fence("a ``` b ````"); f != "`````" {
		t.Errorf("Fence = %q", f)
	}
	if b := Block("diff", "```\nx\n\n"); b != "````diff\n```\nx\n````\n" {
		t.Errorf("Block = %q", b)
	}
}

func TestHeadAndTailKeepCharactersWhole(t *testing.T) {
	s := "a€🚀é"
	for n := -1; n <= len(s)+1; n++ {
		head, tail := Head(s, n), Tail(s, n)
		if len(head) > max(n, 0) || !utf8.ValidString(head) || !strings.HasPrefix(s, head) {
			t.Errorf("Head(%d) = %q", n, head)
		}
		if len(tail) > max(n, 0) || !utf8.ValidString(tail) || !strings.HasSuffix(s, tail) {
			t.Errorf("Tail(%d) = %q", n, tail)
		}
	}
	if Head(s, 5) != "a€" || Tail(s, 5) != "é" {
		t.Errorf("Head(5) = %q, Tail(5) = %q", Head(s, 5), Tail(s, 5))
	}
}

func TestCutKeepsCharactersWholeAndEndsWithTheNote(t *testing.T) {
	note := "\n\n… cut; full log: https://strata.example/runs/1"
	for _, tc := range []struct {
		name string
		in   string
	}{
		{"ascii", strings.Repeat("a", 70000)},
		{"two-byte", strings.Repeat("é", 40000)},
		{"four-byte", strings.Repeat("🚀", 20000)},
		{"mixed", strings.Repeat("a€🚀", 9000)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := Cut(tc.in, MaxBytes, note)
			if len(out) > MaxBytes || !utf8.ValidString(out) || !strings.HasSuffix(out, note) {
				t.Fatalf("%d bytes (limit %d), valid UTF-8 %v, ends with the note %v",
					len(out), MaxBytes, utf8.ValidString(out), strings.HasSuffix(out, note))
			}
		})
	}
	if got := Cut("short", MaxBytes, note); got != "short" {
		t.Errorf("short text changed to %q", got)
	}
	if got := Cut("0123456789", 5, "[cut: too long a note]"); got != "01234" {
		t.Errorf("a note longer than the limit is left out: %q", got)
	}
}

// A report quoting a plan and an error, cut at every length: whatever the
// cut, the result fits, is valid UTF-8, ends with the note and leaves no
// code block open, so the note renders as text.
func TestCutInsideAFencedBlockClosesIt(t *testing.T) {
	md := "**Plan:** 1 to add\n\n" +
		Block("diff", "+ resource \"terraform_data\" \"é\" {\n```\nnot the end of the block\n+ }") +
		"\nThen an error:\n\n" +
		Block("", "Error: ünïcödé 🚀") +
		"\n~~~\ntilde fences count too\n~~~\n" +
		"[Full log](https://strata.example/runs/1)\n"
	note := "\n\n… cut"
	for limit := 0; limit < len(md); limit++ {
		out := Cut(md, limit, note)
		if len(out) > limit || !utf8.ValidString(out) {
			t.Fatalf("Cut(%d) = %q: %d bytes, valid UTF-8 %v", limit, out, len(out), utf8.ValidString(out))
		}
		if limit >= len(note) && !strings.HasSuffix(out, note) {
			t.Fatalf("Cut(%d) = %q lacks the note", limit, out)
		}
		if open := unclosedFence(out); open != "" {
			t.Fatalf("Cut(%d) leaves %s open:\n%s", limit, open, out)
		}
	}
	// A cut in the middle of the diff keeps its start and closes its fence.
	cut := Cut(md, 60, note)
	if !strings.HasPrefix(cut, "**Plan:** 1 to add\n\n````diff\n+ resource") || !strings.HasSuffix(cut, "\n````\n"+note) {
		t.Errorf("cut inside the diff = %q", cut)
	}
}

// unclosedFence follows the fences line by line, the way GitHub renders
// them: inside a block only a fence of the same character, at least as
// long, closes it.
func unclosedFence(md string) string {
	open := ""
	for _, line := range strings.Split(md, "\n") {
		run, char := len(line)-len(strings.TrimLeft(line, "`")), "`"
		if run == 0 {
			run, char = len(line)-len(strings.TrimLeft(line, "~")), "~"
		}
		if run < 3 {
			continue
		}
		switch fence := strings.Repeat(char, run); {
		case open == "":
			open = fence
		case strings.HasPrefix(fence, open) && strings.TrimSpace(line[run:]) == "":
			open = ""
		}
	}
	return open
}
