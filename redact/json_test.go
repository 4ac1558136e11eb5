package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// Secrets that JSON and Terraform escape: a quote, a backslash, a newline,
// HTML characters, non-ASCII, beyond the BMP.
var escapedSecrets = []string{
	`pa"ss-word-1`,
	`C:\secret\dir-2`,
	"line-one\nline-two-3",
	"<script>&-4",
	"mot-de-passe-é-5",
	"emoji-🔑-secret-6",
}

// report is the shape of a stored report: strings in fields, lists and maps.
type report struct {
	Layer  string            `json:"layer"`
	Text   string            `json:"text"`
	Lines  []string          `json:"lines"`
	Labels map[string]string `json:"labels"`
	Count  int64             `json:"count"`
}

// A report holding secrets is encoded with redact.JSON -> no secret in any
// form in the encoding, and numbers kept.
func TestJSONMasksBeforeEscaping(t *testing.T) {
	r, _ := New(nil)
	r.Add(escapedSecrets...)
	for _, s := range escapedSecrets {
		in := report{Layer: "net", Text: "value = " + s + "\n", Lines: []string{"x " + s}, Labels: map[string]string{s: s}, Count: 1 << 53}
		out, err := JSON(in, r.String)
		if err != nil {
			t.Fatal(err)
		}
		for _, form := range append([]string{s}, escapedForms(s)...) {
			if strings.Contains(string(out), form) {
				t.Errorf("secret %q is in the encoding as %q: %s", s, form, out)
			}
		}
		var back report
		if err := json.Unmarshal(out, &back); err != nil || back.Count != 1<<53 || back.Layer != "net" {
			t.Errorf("decoded %+v, %v", back, err)
		}
		if !strings.Contains(back.Text, Mask) {
			t.Errorf("text not masked: %q", back.Text)
		}
	}
}

// A tool that prints a secret escaped (Terraform quotes strings, jq and
// Python escape non-ASCII) -> the escaped form is masked too.
func TestEscapedFormsAreMasked(t *testing.T) {
	r, _ := New(nil)
	r.Add(escapedSecrets...)
	for _, s := range escapedSecrets {
		q := fmt.Sprintf("%q", s)
		ascii := asciiJSON(strings.Trim(mustJSON(s), `"`))
		for _, printed := range []string{q, mustJSON(s), `"` + ascii + `"`} {
			if got := r.String("x = " + printed); strings.Contains(got, strings.Trim(printed, `"`)) {
				t.Errorf("%q printed as %s: %q", s, printed, got)
			}
		}
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
