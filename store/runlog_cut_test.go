package store

import "testing"

// What a run's log keeps of an append, against the limit: all, the head
// and the note once, nothing after.
func TestLogCut(t *testing.T) {
	const note = "[strata] The log is cut here: it reached 10 bytes, the most a run's log may hold (run_log_limit). The run went on.\n"
	for _, tc := range []struct {
		name       string
		size       int64
		cut        bool
		text       string
		keep       string
		wantNowCut bool
	}{
		{"fits", 0, false, "abc\n", "abc\n", false},
		{"fills it exactly", 6, false, "abc\n", "abc\n", false},
		{"crosses it mid-line", 6, false, "abcdef\n", "abcd\n" + note, true},
		{"crosses it at a line end", 6, false, "abc\ndef\n", "abc\n" + note, true},
		{"already full", 10, false, "x", "\n" + note, true},
		{"over by an earlier append", 12, false, "x", "\n" + note, true},
		{"cut before", 130, true, "more\n", "", true},
		// "é" is two bytes: the cut never splits it.
		{"never half a character", 7, false, "aéé", "aé\n" + note, true},
		{"nothing fits of a character", 9, false, "é", "\n" + note, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keep, nowCut := logCut(tc.size, 10, tc.cut, tc.text)
			if keep != tc.keep || nowCut != tc.wantNowCut {
				t.Errorf("logCut(%d, 10, %v, %q) = %q, %v; want %q, %v", tc.size, tc.cut, tc.text, keep, nowCut, tc.keep, tc.wantNowCut)
			}
		})
	}
}
