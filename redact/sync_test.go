package redact

import (
	"strings"
	"testing"
)

// A log synced after every write shows each complete line at once, and
// still masks secrets split across writes, syncs and lines.
func TestWriterSyncWritesCompleteLinesAndNoSecret(t *testing.T) {
	r, _ := New(nil)
	multi := "first line of a secret\nsecond line"
	r.Add(webhookSecret, multi)
	log := "Initializing the backend...\n" +
		"token " + installationToken + " here\n" +
		"secret " + webhookSecret + "\n" +
		"multi " + multi + " end\n" +
		pemKey + "\n" +
		"done\n"

	for _, size := range []int{1, 2, 5, 13, 64, len(log)} {
		var out strings.Builder
		w := r.Writer(&out)
		for s := log; s != ""; {
			n := min(size, len(s))
			w.Write([]byte(s[:n]))
			s = s[n:]
			if err := w.Sync(); err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{webhookSecret, installationToken, "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", "first line of a secret"} {
				if strings.Contains(out.String(), secret) {
					t.Fatalf("writes of %d: %.20q... leaked:\n%s", size, secret, out.String())
				}
			}
		}
		// Everything is a complete line: Sync leaves nothing behind.
		if want := r.String(log); out.String() != want {
			t.Errorf("writes of %d: synced output differs from String:\n%s", size, out.String())
		}
	}
}

// Sync writes what it can at once: the lines before a secret still being
// written, not the secret's start.
func TestWriterSyncKeepsBackAnUnfinishedSecret(t *testing.T) {
	r, _ := New(nil)
	r.Add("line one of it\nline two of it")
	var out strings.Builder
	w := r.Writer(&out)
	w.Write([]byte("Refreshing state...\nvalue: line one of it\n"))
	w.Sync()
	if out.String() != "Refreshing state...\nvalue: " {
		t.Fatalf("after the secret's first line, wrote %q", out.String())
	}
	w.Write([]byte("line two of it\n"))
	w.Sync()
	if want := "Refreshing state...\nvalue: [redacted]\n"; out.String() != want {
		t.Fatalf("after the secret, wrote %q, want %q", out.String(), want)
	}

	w.Write([]byte("partial line"))
	w.Sync()
	if strings.Contains(out.String(), "partial") {
		t.Errorf("Sync wrote an unfinished line: %q", out.String())
	}
}

// A server pattern that may span lines makes Sync keep back as much as
// Write does.
func TestWriterSyncHoldsBackForPatternsAcrossLines(t *testing.T) {
	r, err := New([]string{`password:\s+\S+`})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	w := r.Writer(&out)
	w.Write([]byte("ok\npassword:\n"))
	w.Sync()
	w.Write([]byte("hunter22\n"))
	w.Sync()
	w.Close()
	if strings.Contains(out.String(), "hunter22") {
		t.Errorf("a match across lines leaked: %q", out.String())
	}
	if !matchesLineEnd(`a\sb`) || !matchesLineEnd(`(?s:.)`) || matchesLineEnd(`password=\S+`) || matchesLineEnd(`[a-z]+.x`) {
		t.Error("matchesLineEnd misjudges a pattern")
	}
}
