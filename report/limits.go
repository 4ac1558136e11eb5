// Package report writes Strata's results to GitHub: check runs, comments,
// reactions and minimized comments, within the limits GitHub enforces.
package report

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"strata.dev/strata/engine/markdown"
)

// GitHub's limits.
const (
	// MaxCheckOutput is the most bytes a check run's summary or text may have;
	// the engines render within the same budget.
	MaxCheckOutput = markdown.MaxBytes
	// MaxCommentRunes is the most characters a comment body may have.
	MaxCommentRunes = 65536
	// MaxActions is the most buttons a check run may have.
	MaxActions = 3
	// MaxIdentifier is the longest button identifier (and label).
	MaxIdentifier = 20
)

// CutNote is the note at the end of cut output, pointing to the full log when
// there is one.
func CutNote(logURL string) string {
	if logURL == "" {
		return "\n\n… output cut at GitHub's size limit."
	}
	return "\n\n… output cut at GitHub's size limit; full log: " + logURL
}

// SplitComment splits a comment body into parts of at most max characters,
// at line ends where possible, marking each part when there are several.
func SplitComment(body string, max int) []string {
	if utf8.RuneCountInString(body) <= max {
		return []string{body}
	}
	const marker = "\n\n_(part 00 of 00)_"
	limit := max - len(marker)
	var parts []string
	for body != "" {
		cut := byteIndexOfRune(body, limit)
		if cut < len(body) {
			if nl := strings.LastIndexByte(body[:cut], '\n'); nl > cut/2 {
				cut = nl + 1
			}
		}
		parts = append(parts, body[:cut])
		body = body[cut:]
	}
	for i := range parts {
		parts[i] += "\n\n_(part " + strconv.Itoa(i+1) + " of " + strconv.Itoa(len(parts)) + ")_"
	}
	return parts
}

// byteIndexOfRune returns the byte offset of the n-th character of s, or
// len(s) when s is shorter.
func byteIndexOfRune(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return len(s)
}
