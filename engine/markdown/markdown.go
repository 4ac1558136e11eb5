// Package markdown writes the Markdown of Strata's reports: code fences that
// the quoted text cannot close, and cuts to a size budget that keep every
// character whole and leave no fence open. It knows nothing of GitHub but
// the budget, so the engines can use it.
package markdown

import (
	"sort"
	"strings"
	"unicode/utf8"
)

// MaxBytes is the budget of one piece of output: a check run's summary or
// text (GitHub takes at most 65,535 bytes), or a comment (GitHub takes 65,536
// characters, and this many bytes never hold more).
const MaxBytes = 65535

// Fence returns a backtick fence longer than any run of backticks in s, so
// that s cannot close it.
func Fence(s string) string {
	return strings.Repeat("`", max(3, longestRun(s, '`')+1))
}

// Block returns text as a fenced code block, ending with a newline. info is
// the language ("diff", "text") or "".
func Block(info, text string) string {
	fence := Fence(text)
	return fence + info + "\n" + strings.TrimRight(text, "\n") + "\n" + fence + "\n"
}

// Cut returns md when it fits in limit bytes. Otherwise it keeps the
// longest start of md that fits with note (which says what was cut and where
// the rest is) after it, ending at a character boundary; when that start ends
// inside a fenced code block, the fence is closed before the note, so the
// note and whatever follows do not render as code. A note longer than limit
// is left out.
func Cut(md string, limit int, note string) string {
	if len(md) <= limit {
		return md
	}
	limit = max(limit, 0)
	if len(note) > limit {
		note = ""
	}
	keep := limit - len(note)
	for {
		head := Head(md, keep)
		closing := ""
		if fence := openFence(head); fence != "" {
			closing = fence + "\n"
			if !strings.HasSuffix(head, "\n") {
				closing = "\n" + closing
			}
		}
		over := len(head) + len(closing) + len(note) - limit
		if over <= 0 {
			return head + closing + note
		}
		keep = len(head) - over // the closing fence needs room: cut earlier
	}
}

// Head returns the longest prefix of s of at most n bytes that ends at a
// character boundary.
func Head(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)]
}

// Tail returns the longest suffix of s of at most n bytes that starts at a
// character boundary.
func Tail(s string, n int) string {
	if n >= len(s) {
		return s
	}
	start := len(s) - max(n, 0)
	for start < len(s) && !utf8.RuneStart(s[start]) {
		start++
	}
	return s[start:]
}

// openFence returns the fence of the code block still open at the end of md,
// or "" when none is. As in CommonMark, a fence is three or more backticks or
// tildes indented by at most three spaces, and only a fence of the same
// character, at least as long and followed by nothing but spaces, closes it.
func openFence(md string) string {
	open := ""
	for line := range strings.Lines(md) {
		line = strings.TrimRight(line, "\n")
		fence, rest := fenceOf(line)
		switch {
		case open == "" && len(fence) >= 3 && !(fence[0] == '`' && strings.Contains(rest, "`")):
			open = fence
		case open != "" && fence != "" && fence[0] == open[0] && len(fence) >= len(open) && strings.TrimSpace(rest) == "":
			open = ""
		}
	}
	return open
}

// fenceOf splits a line into its leading run of backticks or tildes (after
// at most three spaces) and the rest; the run is "" when there is none.
func fenceOf(line string) (fence, rest string) {
	trimmed := strings.TrimLeft(line, " ")
	if len(line)-len(trimmed) > 3 || trimmed == "" || (trimmed[0] != '`' && trimmed[0] != '~') {
		return "", line
	}
	n := len(trimmed) - len(strings.TrimLeft(trimmed, trimmed[:1]))
	return trimmed[:n], trimmed[n:]
}

// ShareRoom splits room between texts: equal shares, and what a short text
// does not use goes to the longer ones.
func ShareRoom(texts []string, room int) []int {
	budgets := make([]int, len(texts))
	order := make([]int, 0, len(texts))
	for i, t := range texts {
		if t != "" {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(a, b int) bool { return len(texts[order[a]]) < len(texts[order[b]]) })
	for n, i := range order {
		share := max(room/(len(order)-n), 0)
		budgets[i] = min(len(texts[i]), share)
		room -= budgets[i]
	}
	return budgets
}

// EscapeHTML escapes text for a <summary> or other HTML in a comment.
func EscapeHTML(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// Quote quotes s as one inline code span that nothing in s can end or break
// out of: everything a pull request controls (a name, a path, a branch, a
// value of its .strata.yaml, an error or a subject quoting one) reaches a
// comment or a check's summary or text only through it. Inside a code span
// nothing renders: no link, image, HTML, emoji or @mention (which would
// notify a team). The fence is longer than any run of backticks in s, and a
// space pads s where it starts or ends with a backtick, or starts and ends
// with a space (CommonMark strips one space from each side). A line ending
// would end the paragraph at a blank line or start a heading or a list on
// the next one, so each becomes a space, as CommonMark shows it in a code
// span anyway, and so does a tab (renderers disagree on whether a tab
// counts as the space CommonMark strips); NUL becomes U+FFFD, as CommonMark renders it, and so does
// invalid UTF-8, as GitHub's JSON would. An empty s is a code span of one
// space. In a table cell, QuoteCell.
func Quote(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = codeText.Replace(s)
	if s == "" {
		return "` `"
	}
	pad := ""
	allSpaces := strings.Trim(s, " ") == ""
	if s[0] == '`' || s[len(s)-1] == '`' || (!allSpaces && s[0] == ' ' && s[len(s)-1] == ' ') {
		pad = " "
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	return fence + pad + s + pad + fence
}

// codeText is what Quote changes in s: line endings, tabs and NUL.
var codeText = strings.NewReplacer("\r\n", " ", "\r", " ", "\n", " ", "\t", " ", "\x00", "\uFFFD")

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

// QuoteCell is Quote for a cell of a GitHub table, where a | ends the cell
// before any code span is seen, even inside one, and a backslash before it
// is read as escaping something else: each | becomes U+FF5C, which looks
// alike and means nothing to Markdown.
func QuoteCell(s string) string { return Quote(strings.ReplaceAll(s, "|", "｜")) }
