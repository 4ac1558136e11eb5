package terraform

import (
	"strings"
	"unicode/utf8"
)

// Truncate returns s when it fits in max bytes; otherwise the longest prefix
// that, followed by note on its own line, fits, cut at a line end when one is
// near, and never inside a UTF-8 character. The standard library has no such
// cut (strings.ToValidUTF8 would also touch the middle of s), hence this.
func Truncate(s string, max int, note string) string {
	if len(s) <= max {
		return s
	}
	suffix := "\n" + note
	if note == "" {
		suffix = ""
	}
	cut := max - len(suffix)
	if cut <= 0 {
		return cutUTF8(note, max)
	}
	cut = len(cutUTF8(s, cut))
	if i := strings.LastIndexByte(s[:cut], '\n'); i >= cut/2 {
		cut = i // drop the partial line; suffix brings the newline back
	}
	return s[:cut] + suffix
}

// cutUTF8 is s cut to at most max bytes, at a character boundary.
func cutUTF8(s string, max int) string {
	if len(s) <= max {
		return s
	}
	for max > 0 && !utf8.RuneStart(s[max]) {
		max--
	}
	return s[:max]
}
