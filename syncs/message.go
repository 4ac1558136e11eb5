package syncs

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
)

// The trailers every hydration commit ends with, so that a destination's
// history says where each commit came from (git log --format='%(trailers)').
const (
	trailerSourceCommit = "Strata-Source-Commit"
	trailerSync         = "Strata-Sync"
	trailerSourceRepo   = "Strata-Source-Repo"
)

// sourceCommit is what Git says of a source commit: its whole message and
// its author's name, both as the pusher wrote them.
type sourceCommit struct {
	Message, Author string
}

// maxSubject bounds a source commit's subject in a message or a PR.
const maxSubject = 200

// commitMessage is the message of a hydration commit of a.HeadSHA: the
// sync's dest.commit_message template (Strata's own subject without one),
// then a blank line and the trailers. The trailers are always the last
// paragraph, which is where Git reads trailers, and the template's lines that
// would read as Strata's trailers are indented: neither a source commit's
// subject nor the template can add or change one. A template that fails on
// this commit's data gives Strata's own message and the error, to warn of.
func commitMessage(a jobs.SyncHydrate, src sourceCommit) (string, error) {
	text, err := defaultSubject(a), error(nil)
	if a.Sync.CommitMessage != "" {
		var t string
		if t, err = renderTemplate(a, src); err == nil {
			text = t
		}
	}
	var b strings.Builder
	for i, line := range strings.Split(text, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		line = strings.TrimRightFunc(line, unicode.IsSpace)
		if ourTrailerRE.MatchString(line) {
			line = "  " + line
		}
		b.WriteString(line)
	}
	fmt.Fprintf(&b, "\n\n%s: %s\n%s: %s\n%s: %s\n", trailerSourceCommit, a.HeadSHA, trailerSync, a.Target, trailerSourceRepo, a.FullName)
	return b.String(), err
}

// ourTrailerRE is a line Git or a person could take for one of Strata's
// trailers (Git's keys are case-insensitive; a space before the colon counts).
var ourTrailerRE = regexp.MustCompile(`(?i)^strata-[a-z0-9-]*\s*:`)

func renderTemplate(a jobs.SyncHydrate, src sourceCommit) (string, error) {
	t, err := config.ParseCommitMessage(a.Sync.CommitMessage)
	if err != nil {
		return "", fmt.Errorf("dest commit_message %v", err)
	}
	reason := a.Reason
	if reason == "" {
		reason = jobs.HydratePush
	}
	out, err := config.RenderCommitMessage(t, config.CommitMessageData{Sync: a.Target, Repo: a.FullName, SHA: a.HeadSHA,
		ShortSHA: report.Short(a.HeadSHA), Subject: subjectOf(src.Message), Author: oneLine(src.Author, maxSubject), Reason: reason})
	if err != nil {
		return "", fmt.Errorf("dest commit_message at %s: %v", report.Short(a.HeadSHA), err)
	}
	if out == "" {
		return "", fmt.Errorf("dest commit_message rendered an empty message at %s", report.Short(a.HeadSHA))
	}
	return out, nil
}

// defaultSubject is Strata's own message, as before templates.
func defaultSubject(a jobs.SyncHydrate) string {
	src := a.FullName + "@" + report.Short(a.HeadSHA)
	switch a.Reason {
	case jobs.HydrateRepin:
		return fmt.Sprintf("Rehydrate %s: %s", a.Target, oneLine(a.Note, maxSubject))
	case jobs.HydrateRelease:
		return fmt.Sprintf("Hydrate %s from %s: takeover by #%d ended (%s)", a.Target, src, a.PR, oneLine(a.Note, maxSubject))
	default:
		return fmt.Sprintf("Hydrate %s from %s", a.Target, src)
	}
}

// subjectOf is a commit message's subject as git log's %s reads it: the
// first paragraph on one line.
func subjectOf(message string) string {
	message = strings.TrimLeft(strings.ReplaceAll(message, "\r\n", "\n"), "\n")
	if i := strings.Index(message, "\n\n"); i >= 0 {
		message = message[:i]
	}
	return oneLine(message, maxSubject)
}

// oneLine makes s one line: every control character (line endings, tabs,
// escapes) a space, runs of spaces one, at most max runes with an ellipsis.
func oneLine(s string, max int) string {
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }), " ")
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return strings.TrimSpace(string(r[:max-1])) + "…"
}
