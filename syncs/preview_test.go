package syncs

import (
	"strings"
	"testing"
	"unicode/utf8"

	"strata.dev/strata/engine/markdown"
)

// The preview's diff is a code block that a manifest's backticks cannot
// close, and a diff over GitHub's limit is cut inside it, whole characters
// and the fence kept.
func TestDiffTextKeepsTheFenceClosed(t *testing.T) {
	small := "--- a/dev/cm.yaml\n+++ b/dev/cm.yaml\n@@ -1 +1 @@\n- doc: |\n-  ```\n+ doc: none\n"
	if got := diffText(small); got != "````diff\n"+strings.TrimSuffix(small, "\n")+"\n````\n" {
		t.Errorf("small diff = %q", got)
	}

	big := " ```\n+ " + strings.Repeat("€", 30000) + "\n+ " + strings.Repeat("ü", 10000) + "\n"
	got := diffText(big)
	if len(got) > markdown.MaxBytes || !utf8.ValidString(got) {
		t.Fatalf("cut diff: %d bytes, valid UTF-8 %v", len(got), utf8.ValidString(got))
	}
	if !strings.HasPrefix(got, "````diff\n") || !strings.HasSuffix(got, "\n… diff cut at GitHub's size limit\n````\n") {
		t.Errorf("cut diff starts %q, ends %q", got[:12], got[len(got)-60:])
	}
}
