package redact

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzLiterals: the prefix matcher masks what strings.Replacer with the
// values longest first masked, which it replaced.
func FuzzLiterals(f *testing.F) {
	f.Add("abcdef123456 abcdef123 abcdef", "abcdef123", "abcdef123456", "bcdef1")
	f.Add("aaaaaaaaaaaaaaaa", "aaaaaa", "aaaaaaa", "aaaaaaaaaaaaaaaaaaaaa")
	f.Add("xx\x00\x00\x00\x00\x00\x00yy", "\x00\x00\x00\x00\x00\x00", "\x00\x00\x00\x00\x00\x01", "zzzzzz")
	f.Fuzz(func(t *testing.T, text, a, b, c string) {
		set := map[string]bool{}
		for _, s := range []string{a, b, c} {
			if len(s) >= MinLength {
				set[s] = true
			}
		}
		lit := newLiterals(set)
		var pairs []string
		for _, s := range lit.values {
			pairs = append(pairs, s, Mask)
		}
		want := text
		if len(pairs) > 0 {
			want = strings.NewReplacer(pairs...).Replace(text)
		}
		if got := lit.replace(text); got != want {
			t.Fatalf("replace(%q) with %q = %q, want %q", text, lit.values, got, want)
		}
	})
}

// A position where no value starts costs a filter test: values sharing
// their first bytes, or their prefixes' hash, are all found.
func TestLiteralsFindsValuesSharingPrefixes(t *testing.T) {
	lit := newLiterals(map[string]bool{"ghs_aaaaaa": true, "ghs_bbbbbb": true, "ghs_aaaaaa_longer": true, "Z2hzX2": true})
	text := "x ghs_bbbbbb y ghs_aaaaaa_longer z ghs_aaaaaa Z2hzX2 ghs_cccccc"
	want := "x [redacted] y [redacted] z [redacted] [redacted] ghs_cccccc"
	if got := lit.replace(text); got != want {
		t.Errorf("replace = %q, want %q", got, want)
	}
	if got := lit.replace("no secret here"); got != "no secret here" {
		t.Errorf("replace changed a text without secrets: %q", got)
	}
}

// A fork masks its parent's values, those added after the fork too, and
// its own; the parent does not mask the fork's.
func TestForkMasksItsOwnAndItsParentsValues(t *testing.T) {
	server, _ := New([]string{`password=\S+`})
	server.Add(webhookSecret)
	run := server.Fork()
	run.Add("sensitive-input-value")
	server.Add("added-after-the-fork")
	text := "a " + webhookSecret + " b sensitive-input-value c added-after-the-fork d password=x " + installationToken
	if got, want := run.String(text), "a [redacted] b [redacted] c [redacted] d [redacted] [redacted]"; got != want {
		t.Errorf("fork: %q, want %q", got, want)
	}
	if got := server.String("sensitive-input-value"); got != "sensitive-input-value" {
		t.Errorf("the parent masks the fork's value: %q", got)
	}
	var out strings.Builder
	w := run.Writer(&out)
	w.Write([]byte(text))
	w.Close()
	if out.String() != run.String(text) {
		t.Errorf("the fork's Writer wrote %q", out.String())
	}
}

// FuzzWriterClean: when the Writer lets a text through as it is (clean),
// String would have left it so too, with a server pattern that looks at
// the text's end as well.
func FuzzWriterClean(f *testing.F) {
	f.Add("key=abc def\npassword=x", "secret-value", uint16(10), uint64(1))
	f.Add("ghp_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA tail", "ghp_AAAAAA", uint16(20), uint64(2))
	f.Add("-----BEGIN RSA PRIVATE KEY-----\nabc", "zzzzzz", uint16(35), uint64(3))
	f.Add("id: abcdef", "abcdef", uint16(9), uint64(4))
	f.Fuzz(func(t *testing.T, text, secret string, cut uint16, seed uint64) {
		r, err := New([]string{`id: \w+\b`, `(?m)pw=\S+$`, `tail\z`})
		if err != nil {
			t.Fatal(err)
		}
		r.Add(secret)
		rng := rand.New(rand.NewPCG(seed, seed>>7))
		// Secrets and pattern matches scattered in the text, some cut.
		var b strings.Builder
		for _, c := range []byte(text) {
			switch rng.IntN(16) {
			case 0:
				b.WriteString(secret)
			case 1:
				b.WriteString("id: ab")
			case 2:
				b.WriteString("pw=x")
			}
			b.WriteByte(c)
		}
		w := &Writer{r: r, buf: []byte(b.String())}
		n := int(cut) % (len(w.buf) + 1)
		if head := string(w.buf[:n]); w.clean(r.lits(), w.buf[:n], w.matches()) && r.String(head) != head {
			t.Fatalf("clean head %q, String makes it %q", head, r.String(head))
		}
	})
}
