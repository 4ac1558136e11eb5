package terraform

import (
	"slices"
	"testing"
)

// Plan's output, printed in pieces of any size -> the text show would
// print (no progress lines, no note on the saved plan, no rule before it)
// and what it says; past the bound, the head and a line that says so.
func TestPlanOutputIsReadAsItIsPrinted(t *testing.T) {
	const printed = `terraform_data.a: Refreshing state... [id=1]
data.x.y: Reading...

Terraform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  + create

Terraform will perform the following actions:

  # terraform_data.b will be created
  + resource "terraform_data" "b" {
      + input = "` + "é" + `"
    }

Plan: 1 to add, 0 to change, 0 to destroy.

Changes to Outputs:
  + out = "x"
   

─────────────────────────────────────────────────────────────────────────────

Saved the plan to: /tmp/tfplan

To perform exactly these actions, run the following command to apply:
    terraform apply "/tmp/tfplan"
`
	const text = `
Terraform used the selected providers to generate the following execution
plan. Resource actions are indicated with the following symbols:
  + create

Terraform will perform the following actions:

  # terraform_data.b will be created
  + resource "terraform_data" "b" {
      + input = "` + "é" + `"
    }

Plan: 1 to add, 0 to change, 0 to destroy.

Changes to Outputs:
  + out = "x"
`
	for _, tc := range []struct {
		name  string
		max   int
		piece int
		text  string
	}{
		{"whole", 1 << 20, len(printed), text},
		{"a byte at a time", 1 << 20, 1, text},
		{"in pieces of 7", 1 << 20, 7, text},
		{"cut", 40, 7, "\nTerraform used the selected providers t\n\n… the plan's text goes on (378 bytes in all); see the full log\n"},
		// "é" is two bytes, the second past the bound: the head ends before it.
		{"cut before a character", 290, 3, text[:289] + "\n\n… the plan's text goes on (378 bytes in all); see the full log\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlanOutput(tc.max)
			for rest := printed; rest != ""; {
				n := min(tc.piece, len(rest))
				p.Write([]byte(rest[:n]))
				rest = rest[n:]
			}
			got, r := p.result(true)
			if got != tc.text {
				t.Errorf("text = %q\nwant   %q", got, tc.text)
			}
			if r.Add != 1 || !r.HasChanges || !slices.Equal(r.Changed, []string{"terraform_data.b"}) ||
				!slices.Equal(r.Outputs, []OutputChange{{Name: "out", Action: "add"}}) {
				t.Errorf("summary = %+v", r)
			}
		})
	}
}

// Output that ends without the note on the saved plan (an older Terraform,
// or none at all) keeps its blank lines but the trailing empty ones.
func TestPlanOutputWithoutTheSavedNote(t *testing.T) {
	for _, tc := range []struct{ printed, text string }{
		{"", "\n"},
		{"a: Reading...\n", "\n"},
		{"No changes.\n\n\n", "No changes.\n"},
		{"No changes.\n   \n\n", "No changes.\n   \n"},
		{"no line end", "no line end\n"},
	} {
		p := newPlanOutput(1 << 20)
		p.Write([]byte(tc.printed))
		if got, _ := p.result(false); got != tc.text {
			t.Errorf("%q -> %q, want %q", tc.printed, got, tc.text)
		}
	}
}

// An apply's output past the bound -> its head, whole characters only,
// and a line that says how much followed.
func TestTextHead(t *testing.T) {
	for _, tc := range []struct {
		max    int
		writes []string
		want   string
	}{
		{10, []string{"short\n"}, "short\n"},
		{10, []string{"0123456789"}, "0123456789"},
		{10, []string{"01234", "56789\nmore\n"}, "0123456789\n\n… the output goes on (16 bytes in all); see the full log\n"},
		// "é" is two bytes, the second past the bound.
		{7, []string{"apply é done\n"}, "apply \n\n… the output goes on (14 bytes in all); see the full log\n"},
	} {
		h := &textHead{max: tc.max}
		for _, w := range tc.writes {
			h.Write([]byte(w))
		}
		if got := h.String(); got != tc.want {
			t.Errorf("%q cut at %d = %q, want %q", tc.writes, tc.max, got, tc.want)
		}
	}
}
