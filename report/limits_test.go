package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCutBytesKeepsCharactersWhole(t *testing.T) {
	note := CutNote("https://strata.example/runs/1")
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
			out := CutBytes(tc.in, MaxCheckOutput, note)
			if len(out) > MaxCheckOutput {
				t.Fatalf("cut to %d bytes, want at most %d", len(out), MaxCheckOutput)
			}
			if !utf8.ValidString(out) {
				t.Fatal("cut inside a character")
			}
			if !strings.HasSuffix(out, note) {
				t.Fatal("cut output lacks the note with the log link")
			}
		})
	}
	if got := CutBytes("short", MaxCheckOutput, note); got != "short" {
		t.Fatalf("short text changed to %q", got)
	}
}

func TestSplitCommentStaysUnderGitHubsLimit(t *testing.T) {
	line := strings.Repeat("ü", 99) + "\n"
	body := strings.Repeat(line, 2000) // 200,000 characters
	parts := SplitComment(body, MaxCommentRunes)
	if len(parts) < 4 {
		t.Fatalf("got %d parts, want at least 4", len(parts))
	}
	var joined strings.Builder
	for i, p := range parts {
		if n := utf8.RuneCountInString(p); n > MaxCommentRunes {
			t.Fatalf("part %d has %d characters, over %d", i+1, n, MaxCommentRunes)
		}
		text, _, ok := strings.Cut(p, "\n\n_(part ")
		if !ok {
			t.Fatalf("part %d is not marked", i+1)
		}
		joined.WriteString(text)
	}
	if joined.String() != body {
		t.Fatal("parts joined do not give back the body")
	}
	if got := SplitComment("hi", MaxCommentRunes); len(got) != 1 || got[0] != "hi" {
		t.Fatalf("short comment split into %q", got)
	}
}

func TestActionsRespectGitHubLimits(t *testing.T) {
	if _, err := actions(make([]Action, 4)); err == nil {
		t.Fatal("4 buttons accepted, GitHub allows 3")
	}
	if _, err := actions([]Action{{Label: "Apply", Identifier: strings.Repeat("x", 21)}}); err == nil {
		t.Fatal("21-character identifier accepted, GitHub allows 20")
	}
	if _, err := actions([]Action{{Label: "Apply", Description: "Apply this plan", Identifier: "apply"}}); err != nil {
		t.Fatal(err)
	}
}
