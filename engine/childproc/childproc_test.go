package childproc

import "testing"

// HeadBuffer keeps the first Max bytes of what is written, however it is
// cut into writes, and takes the rest without error.
func TestHeadBuffer(t *testing.T) {
	for _, tc := range []struct {
		writes []string
		max    int
		want   string
	}{
		{[]string{"fatal error: ", "runtime: out of memory"}, 40, "fatal error: runtime: out of memory"},
		{[]string{"fatal error: ", "runtime: out of memory"}, 16, "fatal error: run"},
		{[]string{"abc", "def"}, 3, "abc"},
		{[]string{"abc"}, 0, ""},
	} {
		h := &HeadBuffer{Max: tc.max}
		for _, w := range tc.writes {
			if n, err := h.Write([]byte(w)); n != len(w) || err != nil {
				t.Fatalf("Write(%q) = %d, %v", w, n, err)
			}
		}
		if got := h.String(); got != tc.want {
			t.Errorf("%q with max %d: kept %q, want %q", tc.writes, tc.max, got, tc.want)
		}
	}
}

// Each way Go's runtime says it was refused memory is out of memory; a
// crash for another cause is not.
func TestOutOfMemory(t *testing.T) {
	for _, tc := range []struct {
		stderr string
		want   bool
	}{
		{"fatal error: runtime: out of memory\n\nruntime stack:\n", true},
		{"fatal error: runtime: cannot allocate memory\n\nruntime stack:\nruntime.throw", true},
		{"fatal error: out of memory allocating heap arena map\n", true},
		{"runtime: failed to create new OS thread (have 7 already; errno=12)\nruntime: may need to increase max user processes (ulimit -u)\nfatal error: newosproc\n", true},
		{"runtime: failed to create new OS thread (have 7 already; errno=11)\nfatal error: newosproc\n", false},
		{"panic: runtime error: index out of range [3] with length 3\n", false},
		{"fatal error: concurrent map writes\n", false},
		{"", false},
	} {
		if got := OutOfMemory(tc.stderr); got != tc.want {
			t.Errorf("OutOfMemory(%q) = %v, want %v", tc.stderr, got, tc.want)
		}
	}
}
