package layers

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/hmarr/codeowners"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
	"strata.dev/strata/words"
)

// The codeowners apply requirement (docs/governance.md): each file of a
// layer that the PR changes has an approval of the head commit from one of
// that file's code owners, as the default branch's CODEOWNERS names them.
// These are the pure parts; codeowners.go reads the facts.

// codeownersFacts are what the codeowners requirement is decided on.
type codeownersFacts struct {
	// Read says the facts were read; a layer that requires code owners is
	// refused when they were not, rather than applied unchecked.
	Read bool
	// Branch is the default branch; File the CODEOWNERS path found there,
	// "" when there is none. Problem says why the file cannot be used (too
	// large, a line that does not parse).
	Branch, File, Problem string
	Rules                 codeowners.Ruleset
	// Files are the files the PR changes that each layer counts as its
	// own (layerFiles), by layer name.
	Files map[string][]string
	// Teams are the members of each team owner that was read, by
	// "org/slug" in lower case; Unreadable says why a team could not be.
	Teams      map[string][]string
	Unreadable map[string]string
}

// codeownersFile are the places GitHub looks for CODEOWNERS, in its order:
// the first that exists is used.
var codeownersFile = []string{".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS"}

// layerFiles are the changed files a layer counts as its own: anything
// under its dir (a template or JSON file it reads changes what is applied
// too), what its when_modified globs match (they may reach outside its
// dir), its var files, and anything under the dirs of the local modules it
// calls (modules, repo-relative): a module's change is applied through the
// layer, so the module's owners answer for it.
func layerFiles(l config.Layer, changed, modules []string) []string {
	under := func(dir, f string) bool {
		return dir == "." || dir == "" || f == dir || strings.HasPrefix(f, dir+"/")
	}
	var out []string
	for _, f := range changed {
		f = path.Clean(f)
		own := under(l.Dir, f) || l.Matches(f) ||
			slices.ContainsFunc(l.VarFiles, func(v string) bool { return path.Join(l.Dir, v) == f }) ||
			slices.ContainsFunc(modules, func(m string) bool { return under(m, f) })
		if own && !slices.Contains(out, f) {
			out = append(out, f)
		}
	}
	slices.Sort(out)
	return out
}

// codeownerApprovers are the users whose approval can count for code
// owners: each reviewer's standing review (approvals) that approves the
// head commit, by someone other than the author with write permission or
// more (GitHub's rule for code owners). Notes say why other approvals do
// not count.
func codeownerApprovers(reviews []pull.Review, head, author string, perms map[string]pull.Permission) (approvers, notes []string) {
	for _, r := range approvals(reviews) {
		switch perm := perms[r.Author]; {
		case strings.EqualFold(r.Author, author):
			notes = append(notes, "the author's own approval does not count")
		case !perm.AtLeast(pull.Write):
			if perm == "" || perm == pull.None {
				perm = "no"
			}
			notes = append(notes, fmt.Sprintf("@%s has %s permission, so their approval does not count", r.Author, perm))
		case r.CommitID != head:
			notes = append(notes, fmt.Sprintf("@%s approved %s, not the head %s", r.Author, report.Short(r.CommitID), report.Short(head)))
		default:
			approvers = append(approvers, r.Author)
		}
	}
	return approvers, notes
}

// ownerNeed is a set of files that still need an approval from one of
// Owners (the rule's owners, in its order, as CODEOWNERS writes them).
type ownerNeed struct {
	Files  []string
	Owners []string
}

// codeownersMissing decides which files still lack a code owner's
// approval. For each file the last rule of rules that matches it names its
// owners (GitHub's lookup); a file no rule matches, or whose rule names no
// owner, has no code owner and needs none. A user owner approves when they
// are among approvers, a team when one of its members (teams, by
// "org/slug" in lower case; a team not there has none known) is; an email
// never does, as no login can be told from it. Files with the same owners
// are grouped, in the order of their first file.
func codeownersMissing(files []string, rules codeowners.Ruleset, approvers []string, teams map[string][]string) []ownerNeed {
	approved := func(o codeowners.Owner) bool {
		switch o.Type {
		case codeowners.UsernameOwner:
			return slices.ContainsFunc(approvers, func(a string) bool { return strings.EqualFold(a, o.Value) })
		case codeowners.TeamOwner:
			return slices.ContainsFunc(teams[strings.ToLower(o.Value)], func(m string) bool {
				return slices.ContainsFunc(approvers, func(a string) bool { return strings.EqualFold(a, m) })
			})
		}
		return false
	}
	var out []ownerNeed
	for _, f := range files {
		rule, err := rules.Match(f)
		if err != nil || rule == nil || len(rule.Owners) == 0 || slices.ContainsFunc(rule.Owners, approved) {
			continue
		}
		var owners []string
		for _, o := range rule.Owners {
			owners = append(owners, o.String())
		}
		i := slices.IndexFunc(out, func(n ownerNeed) bool { return slices.Equal(n.Owners, owners) })
		if i < 0 {
			out = append(out, ownerNeed{Owners: owners})
			i = len(out) - 1
		}
		out[i].Files = append(out[i].Files, f)
	}
	return out
}

// teamsToRead are the team owners of the files (by "org/slug" as written),
// each once: only these need their members read.
func teamsToRead(files []string, rules codeowners.Ruleset) []string {
	var out []string
	for _, f := range files {
		rule, err := rules.Match(f)
		if err != nil || rule == nil {
			continue
		}
		for _, o := range rule.Owners {
			if o.Type == codeowners.TeamOwner && !slices.ContainsFunc(out, func(t string) bool { return strings.EqualFold(t, o.Value) }) {
				out = append(out, o.Value)
			}
		}
	}
	return out
}

// The most a refusal lists: groups of files, and files of a group.
const (
	maxOwnerNeeds = 10
	maxNeedFiles  = 10
)

// unmetCodeowners says why the layer misses the codeowners requirement, or
// "". File names are the PR's, so they reach the text through
// markdown.Quote; owners are shown as code too, so that a refusal does not
// notify every team it names.
func unmetCodeowners(layer string, f requirementFacts) string {
	co := f.Codeowners
	const need = "it requires an approval of the head commit from a code owner of each file of the layer the pull request changes"
	files := co.Files[layer]
	switch {
	case !co.Read:
		return need + ", and Strata did not read the code owners; try again"
	case len(files) == 0:
		return ""
	case co.Problem != "":
		return fmt.Sprintf("%s, and %s on %s cannot be used: %s; fix it on %s", need, markdown.Quote(co.File), markdown.Quote(co.Branch),
			markdown.Quote(co.Problem), markdown.Quote(co.Branch))
	case co.File == "":
		return fmt.Sprintf("%s, and %s has no CODEOWNERS file (%s); add one there, or drop `codeowners` from the layer's apply_requirements",
			need, markdown.Quote(co.Branch), report.Names(codeownersFile))
	}
	approvers, notes := codeownerApprovers(f.Reviews, f.Head, f.Author, f.Reviewers)
	missing := codeownersMissing(files, co.Rules, approvers, co.Teams)
	if len(missing) == 0 {
		return ""
	}
	return fmt.Sprintf("%s (%s on %s); still needed: %s", need, markdown.Quote(co.File), markdown.Quote(co.Branch),
		describeNeeds(missing, co.Unreadable, notes))
}

// describeNeeds lists what is missing, bounded, then why some owners or
// approvals cannot count.
func describeNeeds(missing []ownerNeed, unreadable map[string]string, notes []string) string {
	var parts []string
	emails := false
	var teams []string
	for i, n := range missing {
		if i == maxOwnerNeeds {
			parts = append(parts, fmt.Sprintf("and %d more %s", len(missing)-i, words.Plural(len(missing)-i, "group", "groups")))
			break
		}
		shown := n.Files
		more := ""
		if len(shown) > maxNeedFiles {
			more = fmt.Sprintf(" and %d more %s", len(shown)-maxNeedFiles, words.Plural(len(shown)-maxNeedFiles, "file", "files"))
			shown = shown[:maxNeedFiles]
		}
		for _, o := range n.Owners {
			if !strings.HasPrefix(o, "@") {
				emails = true
			} else if why, ok := unreadable[strings.ToLower(strings.TrimPrefix(o, "@"))]; ok && !slices.Contains(teams, o) {
				teams = append(teams, o)
				notes = append(notes, fmt.Sprintf("Strata could not read the members of %s: %s", markdown.Quote(o), why))
			}
		}
		owners := make([]string, len(n.Owners))
		for i, o := range n.Owners {
			owners[i] = markdown.Quote(o)
		}
		parts = append(parts, fmt.Sprintf("%s%s by %s", report.Names(shown), more, strings.Join(owners, " or ")))
	}
	text := strings.Join(parts, "; ")
	if emails {
		notes = append(notes, "an owner named by email cannot be matched to a GitHub login: name them as @login in CODEOWNERS")
	}
	if len(notes) > 0 {
		text += " (" + strings.Join(notes, "; ") + ")"
	}
	return text
}
