package syncs

import (
	"fmt"
	"strings"

	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/report"
	"strata.dev/strata/words"
)

// A sync with dest.hydrate_to hydrates into a staging branch and is promoted
// into dest.branch by one pull request, which Strata opens and keeps up to
// date: these are the decisions of that promotion, as functions of what the
// staging branch, the destination and the open pull request hold.

// stagingCommit is a commit the staging branch has and dest.branch lacks.
type stagingCommit struct {
	SHA, Message string
}

// promotedSource is a source commit a promotion carries.
type promotedSource struct {
	SHA     string
	URL     string // the commit on GitHub
	Subject string // "" when unknown (not read: past the listed ones)
	Author  string
}

// promotedFile is a file the promotion changes: status added, modified,
// removed or renamed, as GitHub's compare says.
type promotedFile struct {
	Path, Status string
}

// openPromotion is the promotion pull request open from the staging branch.
type openPromotion struct {
	Number      int
	Title, Body string
}

// promotionFacts is what promoting one sync reads.
type promotionFacts struct {
	Sync, SourceRepo string
	Staging, Branch  string // the staging branch, and dest.branch it promotes into
	Path             string // dest.path
	Sources          []promotedSource
	Files            []promotedFile
	Open             *openPromotion // nil when none is open
}

// Named outcomes of a promotion.
const (
	promoteNothing = "nothing" // dest.branch holds what staging holds
	promoteOpen    = "open"    // open a pull request
	promoteUpdate  = "update"  // retitle and rewrite the open one
	promoteKeep    = "keep"    // the open one already says it all
)

// promotion is what a hydration does about its promotion pull request.
type promotion struct {
	Outcome     string
	Number      int // the open pull request, for update and keep
	Title, Body string
}

// decidePromotion opens a pull request when the staging branch changes
// files of dest.branch and none is open, updates the open one when its title
// or body would say something else, and does nothing when nothing is left to
// promote (an open one is left for people to close).
func decidePromotion(f promotionFacts) promotion {
	if len(f.Files) == 0 {
		return promotion{Outcome: promoteNothing}
	}
	title, body := promotionTitle(f.Sync, f.Sources), promotionBody(f)
	switch {
	case f.Open == nil:
		return promotion{Outcome: promoteOpen, Title: title, Body: body}
	case f.Open.Title != title || f.Open.Body != body:
		return promotion{Outcome: promoteUpdate, Number: f.Open.Number, Title: title, Body: body}
	default:
		return promotion{Outcome: promoteKeep, Number: f.Open.Number, Title: title, Body: body}
	}
}

// Bounds of a promotion pull request: the SHAs its title names (GitHub
// keeps 256 characters of a title), the source commits and files its body
// lists.
const (
	titleSources  = 5
	listedSources = 20
	listedFiles   = 100
)

// promotionTitle names the source commits carried, oldest first: "Hydrate
// dev: abc1234, def5678", then "and N more".
func promotionTitle(sync string, sources []promotedSource) string {
	if len(sources) == 0 {
		return "Hydrate " + sync
	}
	var shas []string
	for i, s := range sources {
		if i == titleSources {
			break
		}
		shas = append(shas, report.Short(s.SHA))
	}
	title := "Hydrate " + sync + ": " + strings.Join(shas, ", ")
	if more := len(sources) - len(shas); more > 0 {
		title += fmt.Sprintf(" and %d more", more)
	}
	return title
}

// promotionBody lists the source commits (subjects quoted: they are the
// pushers' text) and what the merge changes under dest.path.
func promotionBody(f promotionFacts) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Promotes %s from %s into %s: merging this pull request is the promotion. Strata updates it with each "+
		"hydration into %s, and opens a new one after it merges.\n\n",
		markdown.Quote(f.Sync), markdown.Quote(f.SourceRepo), markdown.Quote(f.Branch+":"+f.Path), markdown.Quote(f.Staging))
	if len(f.Sources) > 0 {
		fmt.Fprintf(&b, "### Source commits\n\n%s, oldest first:\n\n", words.Count(len(f.Sources), "commit", "commits"))
		for i, s := range f.Sources {
			if i == listedSources {
				fmt.Fprintf(&b, "- and %d more\n", len(f.Sources)-i)
				break
			}
			fmt.Fprintf(&b, "- [`%s`](%s)", report.Short(s.SHA), s.URL)
			if s.Subject != "" {
				b.WriteString(" " + markdown.Quote(s.Subject))
			}
			if s.Author != "" {
				b.WriteString(" by " + markdown.Quote(s.Author))
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
	count := map[string]int{}
	for _, file := range f.Files {
		count[file.Status]++
	}
	fmt.Fprintf(&b, "### Changes\n\n**%s**: %d added, %d changed, %d removed", words.Count(len(f.Files), "file", "files"),
		count["added"], len(f.Files)-count["added"]-count["removed"], count["removed"])
	b.WriteString(".\n\n<details><summary>Files</summary>\n\n")
	for i, file := range f.Files {
		if i == listedFiles {
			fmt.Fprintf(&b, "- and %d more\n", len(f.Files)-i)
			break
		}
		fmt.Fprintf(&b, "- %s %s\n", fileVerb(file.Status), markdown.Quote(file.Path))
	}
	b.WriteString("\n</details>\n")
	return markdown.Cut(b.String(), markdown.MaxBytes, "\n\n(cut: the pull request's files tab has every change)\n")
}

func fileVerb(status string) string {
	switch status {
	case "added":
		return "add"
	case "removed":
		return "remove"
	case "renamed":
		return "rename"
	default:
		return "change"
	}
}

// carriedSources are the source commits of sync that the staging commits
// carry, oldest first and each once: those after the last commit that
// hydrated promoted, the source commit dest.branch holds already (a squash
// merge leaves the staging branch's merged commits ahead of it).
func carriedSources(commits []stagingCommit, sync, promoted string) []string {
	var out []string
	seen := map[string]bool{}
	for _, c := range commits {
		t := trailersOf(c.Message)
		src := t[strings.ToLower(trailerSourceCommit)]
		if t[strings.ToLower(trailerSync)] != sync || src == "" {
			continue
		}
		if promoted != "" && src == promoted {
			out, seen = nil, map[string]bool{}
			continue
		}
		if !seen[src] {
			seen[src] = true
			out = append(out, src)
		}
	}
	return out
}

// trailersOf reads the trailers of a commit message as Git does: the lines
// "Key: value" of its last paragraph, keys lowercased. A message whose last
// paragraph has a line that is not a trailer has none.
func trailersOf(message string) map[string]string {
	message = strings.TrimRight(strings.ReplaceAll(message, "\r\n", "\n"), "\n ")
	if i := strings.LastIndex(message, "\n\n"); i >= 0 {
		message = message[i+2:]
	} else {
		return nil // the subject alone is no trailer block
	}
	out := map[string]string{}
	for _, line := range strings.Split(message, "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || k == "" || strings.TrimSpace(k) != k || strings.ContainsAny(k, " \t") {
			return nil
		}
		out[strings.ToLower(k)] = strings.TrimSpace(v)
	}
	return out
}
