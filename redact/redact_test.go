package redact

import (
	"encoding/base64"
	"strings"
	"sync"
	"testing"
)

const (
	installationToken = "ghs_16C7e42F292c6912E7710c838347Ae178B4a"
	webhookSecret     = "correct-horse-battery-staple"
)

var pemKey = `-----BEGIN RSA PRIVATE KEY-----
MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun
VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK
-----END RSA PRIVATE KEY-----`

func TestString(t *testing.T) {
	r, err := New([]string{`password=\S+`})
	if err != nil {
		t.Fatal(err)
	}
	r.Add(installationToken, webhookSecret, "true", "", "  s3cr3t-value\n", "abcdef123", "abcdef123456")

	tests := []struct {
		name, in, want string
	}{
		{"no secret", "Plan: 1 to add, 0 to change, 0 to destroy.", "Plan: 1 to add, 0 to change, 0 to destroy."},
		{"installation token, twice", "git clone https://x-access-token:" + installationToken + "@github.com/a/b " + installationToken,
			"git clone https://x-access-token:[redacted]@github.com/a/b [redacted]"},
		{"webhook secret", "secret is correct-horse-battery-staple.", "secret is [redacted]."},
		{"short values stay", "enabled = true", "enabled = true"},
		{"value registered without its spaces", "got s3cr3t-value here", "got [redacted] here"},
		{"base64 of a value", "AUTH " + base64.StdEncoding.EncodeToString([]byte(webhookSecret)) + " end", "AUTH [redacted]== end"},
		{"longest value wins", "x abcdef123456 y abcdef123 z", "x [redacted] y [redacted] z"},
		{"config pattern", "password=hunter22 user=bob", "[redacted] user=bob"},
		{"personal token", "ghp_" + strings.Repeat("A", 36), "[redacted]"},
		{"oauth token", "token gho_" + strings.Repeat("b", 36) + ".", "token [redacted]."},
		{"user-to-server token", "ghu_" + strings.Repeat("1", 40), "[redacted]"},
		{"refresh token", "ghr_" + strings.Repeat("z", 76), "[redacted]"},
		{"unregistered installation token", "ghs_" + strings.Repeat("Q", 36), "[redacted]"},
		{"fine-grained token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz", "[redacted]"},
		{"token-like but short", "ghs_abc and ghp_", "ghs_abc and ghp_"},
		{"private key", "key:\n" + pemKey + "\ndone", "key:\n[redacted]\ndone"},
		{"private key without end", "key:\n" + pemKey[:80], "key:\n[redacted]"},
		{"public key stays", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----", "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},
		{"bearer header", "> Authorization: Bearer eyJhbGciOi.eyJzdWIi.sig\n", "> Authorization: Bearer [redacted]\n"},
		{"basic header", "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hz", "AUTHORIZATION: basic [redacted]"},
		{"token header of a registered token", "Authorization: token " + installationToken, "Authorization: token [redacted]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestNewRejectsBadPatterns(t *testing.T) {
	for _, p := range []string{`token=(\S+`, `x*`} {
		_, err := New([]string{`ok\d+`, p})
		if err == nil || !strings.Contains(err.Error(), p) {
			t.Errorf("New(%q) err = %v, want an error naming the pattern", p, err)
		}
	}
}

func TestAddWhileRedacting(t *testing.T) {
	r, _ := New(nil)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 50 {
				s := strings.Repeat(string(rune('A'+i)), 6) + strings.Repeat("x", j)
				r.Add(s)
				if got := r.String("<" + s + ">"); got != "<[redacted]>" {
					t.Errorf("String = %q", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func TestWriterMasksSecretsSplitAcrossWrites(t *testing.T) {
	r, _ := New(nil)
	r.Add(webhookSecret)
	long := strings.Repeat("0123456789abcdef", 100) // longer than the pattern window
	r.Add(long)
	log := strings.Repeat("terraform plan output line\n", 300) +
		"secret " + webhookSecret + " and " + installationToken + "\n" +
		pemKey + "\n" + long + "\n" +
		strings.Repeat("more output\n", 500) + "tail " + webhookSecret

	for _, size := range []int{1, 3, 7, 100, 4096, 5000, len(log)} {
		var out strings.Builder
		w := r.Writer(&out)
		for s := log; s != ""; {
			n := min(size, len(s))
			if _, err := w.Write([]byte(s[:n])); err != nil {
				t.Fatal(err)
			}
			s = s[n:]
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if want := r.String(log); out.String() != want {
			t.Errorf("chunks of %d: output differs from String:\n%s", size, out.String())
		}
		for _, secret := range []string{webhookSecret, installationToken, "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun", long} {
			if strings.Contains(out.String(), secret) {
				t.Errorf("chunks of %d: %.20q... leaked", size, secret)
			}
		}
	}
}

func TestWriterKeepsBackOnlyWhatCouldBeASecret(t *testing.T) {
	r, _ := New(nil)
	r.Add(webhookSecret)
	var out strings.Builder
	w := r.Writer(&out)
	w.Write([]byte(strings.Repeat("x", 10000)))
	if out.Len() == 0 || out.Len() < 10000-patternWindow {
		t.Errorf("wrote %d of 10000 bytes before Flush", out.Len())
	}
	w.Flush()
	if out.Len() != 10000 {
		t.Errorf("wrote %d of 10000 bytes after Flush", out.Len())
	}
}
