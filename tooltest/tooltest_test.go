package tooltest

import (
	"errors"
	"runtime"
	"testing"
)

// recorder is a testing.TB that notes how the test ended; like a real
// test, it stops at Skipf and Fatalf.
type recorder struct {
	testing.TB
	ended string
}

func (r *recorder) Helper()               {}
func (r *recorder) Skipf(string, ...any)  { r.ended = "skipped"; runtime.Goexit() }
func (r *recorder) Fatalf(string, ...any) { r.ended = "failed"; runtime.Goexit() }

func TestMissingToolSkipsUnlessToolsAreRequired(t *testing.T) {
	for require, want := range map[string]string{"": "skipped", "0": "skipped", "1": "failed"} {
		t.Setenv(RequireEnv, require)
		r := &recorder{TB: t}
		done := make(chan struct{})
		go func() {
			defer close(done)
			Missing(r, "terraform at bin/terraform", errors.New("no such file"))
		}()
		<-done
		if r.ended != want {
			t.Errorf("%s=%q: the test %s, want %s", RequireEnv, require, r.ended, want)
		}
	}
}
