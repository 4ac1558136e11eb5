package layers

import (
	"fmt"
	"strings"

	"strata.dev/strata/checks"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/words"
)

// The decisions of GitHub's merge queue (docs/governance.md, "Merge
// queue"), as pure functions: which pull requests a group holds
// (groupMembers), whether each layer they change is ready to merge
// (decideMergeGroup), what a group's reviewed changes are when several of
// its pull requests change one layer that applies on merge
// (reviewedUnion), and the check on the group's head (groupCheck).

// groupState is where one layer of one pull request of a group stands.
type groupState string

const (
	// groupApplied: its plan at the PR's head is applied, and the layer's
	// last apply is that one.
	groupApplied groupState = "applied"
	// groupNoChanges: its plan at the PR's head changes nothing.
	groupNoChanges groupState = "no changes"
	// groupUnapplied: planned with changes at the head, not applied.
	groupUnapplied groupState = "not applied"
	// groupUnplanned: no plan of the PR's head.
	groupUnplanned groupState = "not planned"
	// groupMovedOn: applied, but another apply of the layer came after.
	groupMovedOn groupState = "applied over"
	// groupCompare: the layer applies on merge: the group's head is
	// planned and compared with the reviewed plan.
	groupCompare groupState = "to compare"
	// groupEquivalent: the plan at the group's head makes the reviewed
	// changes.
	groupEquivalent groupState = "equivalent"
	// groupDiffers: it does not (or cannot be compared).
	groupDiffers groupState = "differs"
	// groupRefused: the layer applies on merge, but the merge would not
	// apply it (a requirement unmet, the policy gate): said while the
	// pull request can still be approved.
	groupRefused groupState = "refused"
)

// passes says whether the state lets the group merge.
func (s groupState) passes() bool {
	return s == groupApplied || s == groupNoChanges || s == groupEquivalent
}

// groupCommit is a commit the group adds to its base, with its parents.
type groupCommit struct {
	SHA     string
	Parents []string
}

// groupMembers finds the pull requests of a group from its commits (oldest
// first) and the pull requests GitHub associates with them (pulls, by the
// commit looked up, lookupOf): it walks the group's first parents from its
// head; each is the queue's commit for one pull request: a merge commit,
// whose second parent is that pull request's head, or, squashed or
// rebased, a commit of its own. The pull request the head ref names (last,
// 0 when it names none) is a member in any case. It returns the members in
// queue order and the commits no open pull request into base claims.
func groupMembers(head string, commits []groupCommit, pulls map[string][]groupPull, base string, last int) (members []int, unknown []string) {
	seen := map[int]bool{}
	for _, sha := range firstParents(head, commits) {
		var found []int
		for _, p := range pulls[lookupOf(sha, commits)] {
			if p.State == "open" && p.BaseRef == base && !seen[p.Number] {
				found = append(found, p.Number)
			}
		}
		if len(found) == 0 && !(sha == head && last != 0) {
			unknown = append(unknown, sha)
		}
		for _, n := range found {
			seen[n] = true
			members = append(members, n)
		}
	}
	if last != 0 && !seen[last] {
		members = append(members, last)
	}
	return members, unknown
}

// groupPull is a pull request GitHub associates with a commit.
type groupPull struct {
	Number  int
	State   string
	BaseRef string
}

// firstParents are the group's first-parent commits, oldest first.
func firstParents(head string, commits []groupCommit) []string {
	byID := map[string]groupCommit{}
	for _, c := range commits {
		byID[c.SHA] = c
	}
	var out []string
	for sha := head; ; {
		c, ok := byID[sha]
		if !ok {
			break
		}
		out = append([]string{sha}, out...)
		if len(c.Parents) == 0 {
			break
		}
		sha = c.Parents[0]
	}
	return out
}

// lookupOf is the commit whose pull requests tell who a first-parent
// commit of the group is for: a merge's second parent (the pull request's
// head), else the commit itself.
func lookupOf(sha string, commits []groupCommit) string {
	for _, c := range commits {
		if c.SHA == sha && len(c.Parents) > 1 {
			return c.Parents[1]
		}
	}
	return sha
}

// groupPR is one pull request of a group, as the decision needs it.
type groupPR struct {
	Number int
	Head   string
	// Layers are the layers it changes (policy from the default branch).
	Layers []config.Layer
	Plans  []*store.Plan
	// Reviewed names its layers whose reviewed plan's changes are kept.
	Reviewed map[string]bool
	// Requirements and Policy are what its merge's apply will be
	// decided on (applyOnMerge), read for the layers that apply on merge.
	Requirements requirementFacts
	Policy       map[string]policyFacts
}

// groupFacts are what a group is decided on.
type groupFacts struct {
	PRs []groupPR
	// Unknown are commits of the group no pull request was found for;
	// TooMany says the group has more commits than GitHub lists.
	Unknown []string
	TooMany bool
	// LastApply is each changed layer's last apply.
	LastApply map[string]store.LayerApplied
}

// groupItem is one layer of one pull request of the group.
type groupItem struct {
	PR    int
	Layer config.Layer
	State groupState
	Why   string
}

// decideMergeGroup decides, for each layer each pull request of the group
// changes, whether it is ready to merge: applied from that pull request
// at its head with nothing applied over it since, nothing to apply, or,
// for a layer that applies on merge, a reviewed plan to compare with the
// plan of the group's head (groupCompare: the caller plans and compares).
func decideMergeGroup(f groupFacts) []groupItem {
	var out []groupItem
	for _, pr := range f.PRs {
		atHead := plansAt(pr.Plans, pr.Head)
		for _, l := range pr.Layers {
			it := groupItem{PR: pr.Number, Layer: l}
			p := atHead[l.Name]
			last := f.LastApply[l.Name]
			switch {
			case p == nil:
				it.State = groupUnplanned
				it.Why = fmt.Sprintf("no plan of its head %s; comment %s", report.Short(pr.Head), markdown.Quote("/plan "+l.Name))
				if !l.AppliesOnMerge() {
					it.Why += " then " + markdown.Quote("/apply "+l.Name)
				}
			case !p.HasChanges:
				it.State, it.Why = groupNoChanges, "its plan changes nothing"
			case !p.AppliedAt.IsZero() && (last.PR != pr.Number || last.HeadSHA != pr.Head):
				it.State = groupMovedOn
				it.Why = fmt.Sprintf("applied at %s, but #%d applied the layer at %s since, over it; plan and apply it again", report.Short(pr.Head), last.PR, report.Short(last.HeadSHA))
			case !p.AppliedAt.IsZero():
				it.State, it.Why = groupApplied, fmt.Sprintf("applied at %s", report.Short(pr.Head))
			case !l.AppliesOnMerge():
				it.State = groupUnapplied
				it.Why = fmt.Sprintf("planned at %s and not applied; comment %s before it merges", report.Short(pr.Head), markdown.Quote("/apply "+l.Name))
			case !pr.Reviewed[l.Name]:
				it.State, it.Why = groupDiffers, "the changes of its reviewed plan were not kept, so the group's plan cannot be compared with them; plan it again"
			case unmetRequirement(withMergeRequirements(l), pr.Requirements) != "":
				it.State, it.Why = groupRefused, "the merge would not apply it: "+unmetRequirement(withMergeRequirements(l), pr.Requirements)
			case policyGate(pr.Policy[l.Name]).refusal(l.Name) != "":
				it.State, it.Why = groupRefused, "the merge would not apply it: "+policyGate(pr.Policy[l.Name]).refusal(l.Name)
			default:
				it.State, it.Why = groupCompare, "applies on merge: the plan at the group's head is compared with the reviewed one"
			}
			out = append(out, it)
		}
	}
	return out
}

// withMergeRequirements is the layer with the apply requirements that hold
// after a merge (mergeRequirements).
func withMergeRequirements(l config.Layer) config.Layer {
	l.ApplyRequirements = mergeRequirements(l.ApplyRequirements)
	return l
}

// reviewedUnion is what a group's head must change in a layer that applies
// on merge: the reviewed changes of each of its pull requests that change
// it, together. Two that change one address cannot be told apart (each
// plan saw the layer without the other's change), so they are refused
// with the address.
func reviewedUnion(byPR map[int][]terraform.PlannedChange, order []int) ([]terraform.PlannedChange, string) {
	var out []terraform.PlannedChange
	owner := map[string]int{}
	for _, n := range order {
		for _, c := range byPR[n] {
			if prev, ok := owner[c.Address]; ok {
				return nil, fmt.Sprintf("#%d and #%d both change %s: queue them in separate groups (one after the other merged)", prev, n, markdown.Quote(c.Address))
			}
			owner[c.Address] = n
			out = append(out, c)
		}
	}
	return out, ""
}

// groupCheck is `strata/applied` on the group's head: success when every
// layer passes; failure otherwise, naming each pull request and layer
// that does not and why.
func groupCheck(head string, members []int, items []groupItem, unknown []string, tooMany bool) report.Check {
	c := report.Check{Name: checks.Applied, HeadSHA: head}
	var bad, good []string
	for _, it := range items {
		line := fmt.Sprintf("#%d %s: %s", it.PR, markdown.Quote(it.Layer.Name), it.Why)
		if it.State.passes() {
			good = append(good, "- ✅ "+line)
		} else {
			bad = append(bad, "- ❌ "+line)
		}
	}
	for _, sha := range unknown {
		bad = append(bad, fmt.Sprintf("- ❌ commit %s: Strata found no open pull request of the queue's base it comes from, so it cannot tell whether its layers were applied", report.Short(sha)))
	}
	if tooMany {
		bad = append(bad, "- ❌ the group adds more commits than GitHub's compare lists, so Strata cannot tell which pull requests it holds")
	}
	prs := make([]string, len(members))
	for i, n := range members {
		prs[i] = fmt.Sprintf("#%d", n)
	}
	held := "The group holds " + strings.Join(prs, ", ") + "."
	if len(members) == 0 {
		held = "Strata found no pull request in the group."
	}
	switch {
	case len(bad) > 0:
		c.Conclusion = "failure"
		c.Title = fmt.Sprintf("%d %s not ready to merge", len(bad), words.Plural(len(bad), "layer", "layers"))
		if len(unknown) > 0 || tooMany {
			c.Title = "Cannot tell which pull requests the group holds"
		}
		c.Summary = held + " Not ready:\n\n" + strings.Join(bad, "\n")
		if len(good) > 0 {
			c.Summary += "\n\nReady:\n\n" + strings.Join(good, "\n")
		}
	case len(items) == 0:
		c.Conclusion, c.Title, c.Summary = "success", "No layer changes", held+" They change no layer."
	default:
		c.Conclusion, c.Title = "success", "Every layer of the group is applied"
		c.Summary = held + "\n\n" + strings.Join(good, "\n")
	}
	return c
}
