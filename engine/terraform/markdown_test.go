package terraform

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSummaryLine(t *testing.T) {
	for _, tc := range []struct {
		r    PlanResult
		want string
	}{
		{PlanResult{}, "No changes"},
		{PlanResult{HasChanges: true, Add: 2, Change: 1}, "2 to add, 1 to change, 0 to destroy"},
		{PlanResult{HasChanges: true, Import: 1, Change: 1}, "1 to import, 0 to add, 1 to change, 0 to destroy"},
		{PlanResult{HasChanges: true, Outputs: []OutputChange{{Name: "url", Action: "change"}}}, "0 to add, 0 to change, 0 to destroy, 1 output value to change"},
	} {
		if got := tc.r.Summary(); got != tc.want {
			t.Errorf("Summary() = %q, want %q", got, tc.want)
		}
	}
}

func TestMarkdownSummaryCapsLongLists(t *testing.T) {
	r := &PlanResult{HasChanges: true}
	for i := range 120 {
		addr := "terraform_data.r" + strings.Repeat("x", i%3) + string(rune('a'+i%26))
		r.Changed = append(r.Changed, addr)
		r.Destroyed = append(r.Destroyed, addr)
	}
	r.Destroy = 120
	md := r.MarkdownSummary()
	if !strings.Contains(md, "- … and 70 more") || !strings.Contains(md, "and 70 more\n") {
		t.Errorf("lists are not capped:\n%s", md)
	}
	if strings.Count(md, "\n- `") != maxListed {
		t.Errorf("%d listed, want %d", strings.Count(md, "\n- `"), maxListed)
	}
}

func TestTruncate(t *testing.T) {
	if got := Truncate("short", 10, "cut"); got != "short" {
		t.Errorf("fitting text changed: %q", got)
	}
	s := "line one\nligne deux é\n" + strings.Repeat("ééé", 10)
	for n := 1; n < len(s); n++ {
		got := Truncate(s, n, "[cut]")
		if len(got) > n || !utf8.ValidString(got) {
			t.Fatalf("Truncate(%d) = %q: %d bytes, valid %v", n, got, len(got), utf8.ValidString(got))
		}
	}
	if got := Truncate(s, 30, "[cut]"); got != "line one\nligne deux é\n[cut]" {
		t.Errorf("want a cut at the line end, got %q", got)
	}
}
