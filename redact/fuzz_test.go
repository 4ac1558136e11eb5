package redact

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// FuzzWriter: whatever the text and however it is cut into writes, the
// output never contains a registered secret.
func FuzzWriter(f *testing.F) {
	f.Add([]byte("plan output\nwith lines"), "hunter2hunter2", "hunter2", uint64(1))
	f.Add([]byte{0, 7, 11, 77, 1, 2}, "SSSSSSSS", "SSSSSSSSSSSS", uint64(42))
	f.Add([]byte("x"), "0123456789", "5678901234", uint64(7))
	f.Fuzz(func(t *testing.T, data []byte, s1, s2 string, seed uint64) {
		secrets := usable(s1, s2)
		if len(secrets) == 0 {
			t.Skip()
		}
		r, _ := New(nil)
		r.Add(secrets...)

		// Scatter the secrets (and their halves) through the data, then
		// repeat it so the Writer has to cut the stream.
		var b strings.Builder
		for b.Len() < 3*minChunk {
			for _, c := range data {
				switch c % 13 {
				case 0:
					b.WriteString(secrets[0])
				case 1:
					b.WriteString(secrets[len(secrets)-1])
				case 2:
					b.WriteString(secrets[0][:len(secrets[0])/2])
				default:
					b.WriteByte(c)
				}
			}
			b.WriteString(secrets[int(seed)%len(secrets)])
		}
		in := b.String()

		rng := rand.New(rand.NewPCG(seed, seed>>32))
		var out strings.Builder
		w := r.Writer(&out)
		for s := in; s != ""; {
			n := min(1+rng.IntN(2*minChunk), len(s))
			w.Write([]byte(s[:n]))
			s = s[n:]
			if rng.IntN(3) == 0 {
				w.Sync()
			}
		}
		w.Flush()

		for _, s := range secrets {
			if strings.Contains(out.String(), s) {
				t.Fatalf("secret %q in output", s)
			}
			if strings.Contains(r.String(in), s) {
				t.Fatalf("secret %q in String output", s)
			}
		}
	})
}

// usable keeps the values Add registers and that cannot be formed with the
// mask's help (a "secret" like "acted]x" would appear in masked text).
func usable(values ...string) []string {
	var out []string
	for _, v := range values {
		if len(v) >= MinLength && v == strings.TrimSpace(v) && !strings.ContainsAny(v, "[]") && !strings.Contains(Mask, v) {
			out = append(out, v)
		}
	}
	return out
}

// benchLog is about 1 MB of Terraform-like output with 50 registered
// secrets, each appearing a few times.
func benchLog() (*Redactor, string) {
	r, _ := New([]string{`password=\S+`})
	secrets := make([]string, 50)
	for i := range secrets {
		secrets[i] = fmt.Sprintf("sk-%02d-%s", i, strings.Repeat("Z9y8X7w6", 4))
	}
	r.Add(secrets...)
	var b strings.Builder
	for i := 0; b.Len() < 1<<20; i++ {
		fmt.Fprintf(&b, "  # module.layer[%d].terraform_data.x will be created\n  + resource \"terraform_data\" \"x\" {\n      + id = (known after apply)\n    }\n", i)
		if i%20 == 0 {
			fmt.Fprintf(&b, "      + input = %q\n", secrets[i%len(secrets)])
		}
	}
	return r, b.String()
}

func BenchmarkString(b *testing.B) {
	r, log := benchLog()
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		r.String(log)
	}
}

func BenchmarkWriter(b *testing.B) {
	r, log := benchLog()
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		w := r.Writer(discard{})
		for s := log; s != ""; {
			n := min(4096, len(s))
			w.Write([]byte(s[:n]))
			s = s[n:]
		}
		w.Flush()
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
