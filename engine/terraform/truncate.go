package terraform

import (
	"strings"

	"strata.dev/strata/engine/markdown"
)

// Truncate returns s when it fits in max bytes; otherwise the longest prefix
// that, followed by note on its own line, fits, cut at a line end when one is
// near, and never inside a UTF-8 character. s is plain text (a plan, before
// it is fenced); Markdown is cut with markdown.Cut.
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
		return markdown.Head(note, max)
	}
	cut = len(markdown.Head(s, cut))
	if i := strings.LastIndexByte(s[:cut], '\n'); i >= cut/2 {
		cut = i // drop the partial line; suffix brings the newline back
	}
	return s[:cut] + suffix
}
