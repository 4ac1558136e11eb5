package report

import (
	"strings"

	"strata.dev/strata/engine/markdown"
)

// Short is a commit's SHA as people read it.
func Short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// FirstLine is the first line of a message (an error, a command's output),
// for a one-line summary.
func FirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// Names lists names, each quoted as code (markdown.Quote), or says "none".
func Names(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = markdown.Quote(n)
	}
	return strings.Join(quoted, ", ")
}
