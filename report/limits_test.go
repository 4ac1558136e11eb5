package report

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCheckOutputIsCutToGitHubsLimit(t *testing.T) {
	const logURL = "https://strata.example/runs/1"
	note := CutNote(logURL)
	for _, tc := range []struct {
		name string
		in   string
	}{
		{"ascii", strings.Repeat("a", 70000)},
		{"two-byte", strings.Repeat("é", 40000)},
		{"four-byte", strings.Repeat("🚀", 20000)},
		{"mixed", strings.Repeat("a€🚀", 9000)},
		{"fenced", "```\n" + strings.Repeat("a€🚀\n", 9000) + "```\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := new(Reporter).output(Check{Title: "t", Summary: tc.in, Text: tc.in, LogURL: logURL})
			for _, got := range []string{out.GetSummary(), out.GetText()} {
				if len(got) > MaxCheckOutput {
					t.Fatalf("cut to %d bytes, want at most %d", len(got), MaxCheckOutput)
				}
				if !utf8.ValidString(got) {
					t.Fatal("cut inside a character")
				}
				if !strings.HasSuffix(got, note) {
					t.Fatal("cut output lacks the note with the log link")
				}
				if n := strings.Count("\n"+got, "\n```"); n%2 != 0 {
					t.Fatal("cut output leaves its code block open")
				}
			}
		})
	}
	if out := new(Reporter).output(Check{Title: "t", Summary: "short"}); out.GetSummary() != "short" {
		t.Fatalf("short text changed to %q", out.GetSummary())
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
