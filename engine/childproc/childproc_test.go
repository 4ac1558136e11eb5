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
