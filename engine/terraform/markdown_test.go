package terraform

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"strata.dev/strata/engine/markdown"
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

func TestCommentGathersLayersAndErrors(t *testing.T) {
	plan := &PlanResult{
		HasChanges: true, Add: 1, Changed: []string{"terraform_data.x"},
		Text: "Terraform will perform the following actions:\n\n  # terraform_data.x will be created\n  + resource \"terraform_data\" \"x\" {\n      + id = (known after apply)\n    }\n\nPlan: 1 to add, 0 to change, 0 to destroy.\n",
	}
	c := Comment([]LayerReport{
		{Layer: "network", Result: plan, LogURL: "https://strata.example/runs/1"},
		{Layer: "db<prod>", Err: errors.New("terraform init: Error: Unsupported Terraform Core version")},
		{Layer: "quiet", Result: &PlanResult{Text: "No changes. Your infrastructure matches the configuration.\n"}},
	})
	for _, want := range []string{
		"**Terraform plan:** 3 layers, 1 with changes, 1 failed",
		"<details><summary><b>network</b>: 1 to add, 0 to change, 0 to destroy</summary>",
		"```diff\n",
		"\n+   resource \"terraform_data\" \"x\" {\n+       id = (known after apply)\n",
		"[Full log](https://strata.example/runs/1)",
		"<details open><summary>❌ <b>db&lt;prod&gt;</b>: failed</summary>",
		"Unsupported Terraform Core version",
		"<b>quiet</b>: No changes</summary>",
	} {
		if !strings.Contains(c, want) {
			t.Errorf("comment lacks %q:\n%s", want, c)
		}
	}
	if strings.Count(c, "<details") != 3 || strings.Count(c, "</details>") != 3 {
		t.Errorf("want one <details> per layer:\n%s", c)
	}
}

func TestCommentFitsTheLimitByCuttingPlanTexts(t *testing.T) {
	big := strings.Repeat("  + resource \"terraform_data\" \"é\" {}\n", 5000)
	layers := []LayerReport{
		{Layer: "small", Result: &PlanResult{HasChanges: true, Add: 1, Text: "  + small\n"}},
		{Layer: "big1", Result: &PlanResult{HasChanges: true, Add: 5000, Text: big}, LogURL: "https://x/1"},
		{Layer: "big2", Result: &PlanResult{HasChanges: true, Add: 5000, Text: big}},
	}
	for _, limit := range []int{markdown.MaxBytes, 4000} {
		c := comment(layers, limit)
		if len(c) > limit || !utf8.ValidString(c) {
			t.Errorf("limit %d: comment is %d bytes, valid UTF-8 %v", limit, len(c), utf8.ValidString(c))
		}
		if !strings.Contains(c, "+   small\n") || strings.Count(c, "… plan cut to fit in a comment") != 2 {
			t.Errorf("limit %d: the small plan must stay whole and both big ones be cut:\n%s", limit, c[:min(len(c), 2000)])
		}
		if strings.Count(c, "</details>") != 3 {
			t.Errorf("limit %d: a layer lost its closing tag", limit)
		}
	}
}

// An error message is not given a share of the room: when one is too long,
// the comment is cut inside its fence, and the fence is closed.
func TestCommentCutInsideAnErrorClosesItsFence(t *testing.T) {
	msg := "terraform plan: Error: " + strings.Repeat("ünïcödé detail\n", 8000)
	c := Comment([]LayerReport{
		{Layer: "quiet", Result: &PlanResult{Text: "No changes.\n"}},
		{Layer: "broken", Err: errors.New(msg)},
	})
	if len(c) > markdown.MaxBytes || !utf8.ValidString(c) {
		t.Fatalf("comment is %d bytes, valid UTF-8 %v", len(c), utf8.ValidString(c))
	}
	if !strings.HasSuffix(c, "\n```\n\n\n… comment cut to fit") {
		t.Errorf("the error's fence is not closed before the note:\n%s", markdown.Tail(c, 200))
	}
	if n := strings.Count("\n"+c, "\n```"); n%2 != 0 {
		t.Errorf("%d fence lines: one is left open", n)
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
