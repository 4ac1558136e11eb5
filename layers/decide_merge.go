package layers

import (
	"fmt"
	"sort"
	"strings"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/words"
)

// The decisions of auto_apply: on_merge (docs/governance.md), as pure
// functions: which layers a merge applies (applyOnMerge) and whether the
// plan at the merge commit makes the changes that were reviewed
// (plansEquivalent).

// mergeState is where a layer's post-merge apply is, named; the store keeps
// it (merge_applies.state).
type mergeState string

const (
	// mergeQueued: it waits for its turn (merge order) and the layer's slot.
	mergeQueued mergeState = "queued"
	// mergeRunning: it plans at the merge commit, or applies.
	mergeRunning mergeState = "running"
	// mergeApplied: the plan at the merge commit made the reviewed changes
	// and is applied; the lock is released.
	mergeApplied mergeState = "applied"
	// mergeNoChanges: the plan at the merge commit changes nothing, as the
	// reviewed one; the lock is released.
	mergeNoChanges mergeState = "no changes"
	// mergeDiffers: the plan at the merge commit is not the reviewed one;
	// nothing is applied, the lock is released.
	mergeDiffers mergeState = "differs"
	// mergeRefused: the merge applies nothing to the layer (no reviewed
	// plan, a requirement unmet, another PR's lock).
	mergeRefused mergeState = "refused"
	// mergeSkipped: a layer it depends on was not applied.
	mergeSkipped mergeState = "skipped"
	// mergeFailed: Terraform's apply failed, or the server died while it
	// ran (mergeInterrupted): the layer may be partly applied, so the PR
	// keeps the lock until someone looks.
	mergeFailed      mergeState = "failed"
	mergeInterrupted mergeState = "interrupted"
)

// keepsLock says whether the PR keeps the layer's lock in this state.
func (s mergeState) keepsLock() bool {
	switch s {
	case mergeQueued, mergeRunning, mergeFailed, mergeInterrupted:
		return true
	}
	return false
}

// mergeFacts are what a merged PR's post-merge applies are decided on.
type mergeFacts struct {
	PR int
	// Head is the PR's head when it merged: its plans there are the
	// reviewed ones.
	Head string
	// Layers are the layers the PR changed that apply on merge (policy from
	// the default branch).
	Layers []config.Layer
	Plans  []*store.Plan
	// Reviewed names the layers whose plan at Head has its changes kept.
	Reviewed map[string]bool
	// Locks is the holder PR of each locked layer; Merging the layers
	// whose holder's post-merge apply is queued or running (it releases the
	// lock when it ends, and this one comes after it).
	Locks        map[string]int
	Merging      map[string]bool
	Requirements requirementFacts
	// Policy is each layer's policy facts about its reviewed plan
	// (decide_policy.go): the gate holds on merge as on /apply.
	Policy map[string]policyFacts
}

// mergeStep is one layer's part of a merge: queued to plan at the merge
// commit and apply, or already settled with Why.
type mergeStep struct {
	Layer config.Layer
	State mergeState
	Why   string
	// Take: the PR holds no lock on the layer (lock: on_apply, or another
	// merged PR's apply holds it until it ends) and takes it for the apply,
	// when its turn comes.
	Take bool
}

// mergeRequirements are the apply requirements that still mean something
// once the PR merged: approved (the merged head's approvals). mergeable
// and undiverged are GitHub's to decide before merging (branch protection),
// and the plan at the merge commit, compared with the reviewed one, is what
// catches a base that moved on.
func mergeRequirements(reqs []config.ApplyRequirement) []config.ApplyRequirement {
	var out []config.ApplyRequirement
	for _, r := range reqs {
		if r != config.Mergeable && r != config.Undiverged {
			out = append(out, r)
		}
	}
	return out
}

// applyOnMerge decides, for each layer a merged PR changed that applies on
// merge, in dependency order, whether its post-merge apply runs: only when
// the PR's head has a reviewed plan with changes that is not applied yet,
// the layer's requirements that hold after a merge are met (code owners
// included), its policy sets let the reviewed plan be applied, no other PR
// holds its lock, and each layer it depends on (among these) runs or had
// nothing to apply. The policy judged the reviewed plan; the plan at the
// merge commit applies only when it makes the same changes
// (plansEquivalent), so that judgement holds for it.
func applyOnMerge(f mergeFacts) []mergeStep {
	ordered, err := dependencyOrder(f.Layers)
	if err != nil {
		out := make([]mergeStep, len(f.Layers))
		for i, l := range f.Layers {
			out[i] = mergeStep{Layer: l, State: mergeRefused, Why: err.Error()}
		}
		return out
	}
	atHead := plansAt(f.Plans, f.Head)
	settled := map[string]mergeState{}
	var out []mergeStep
	for _, l := range ordered {
		s := mergeStep{Layer: l, State: mergeQueued}
		p := atHead[l.Name]
		holder, held := f.Locks[l.Name]
		switch {
		case p == nil:
			s.State, s.Why = mergeRefused, fmt.Sprintf("it merged without a plan of its head %s, so nothing was reviewed to apply; plan the default branch in a new pull request", report.Short(f.Head))
		case !p.AppliedAt.IsZero():
			s.State, s.Why = mergeApplied, "its plan was applied with /apply before the merge"
		case !p.HasChanges:
			s.State, s.Why = mergeNoChanges, "its reviewed plan changes nothing"
		case !f.Reviewed[l.Name]:
			s.State, s.Why = mergeRefused, "the changes of its reviewed plan were not kept (the plan's JSON could not be read), so they cannot be compared; nothing was applied"
		case held && holder != f.PR && !f.Merging[l.Name]:
			s.State, s.Why = mergeRefused, fmt.Sprintf("#%d holds its lock; nothing was applied", holder)
		default:
			s.Take = !held || holder != f.PR
			if why := unmetRequirement(withMergeRequirements(l), f.Requirements); why != "" {
				s.State, s.Why, s.Take = mergeRefused, why+"; "+mergeRecovery(l.Name, "the approvals it requires"), false
			} else if why := mergePolicyRefusal(l.Name, policyGate(f.Policy[l.Name])); why != "" {
				s.State, s.Why, s.Take = mergeRefused, why, false
			}
		}
		if s.State == mergeQueued {
			for _, dep := range l.DependsOn {
				if st, ok := settled[dep]; ok && st != mergeQueued && st != mergeApplied && st != mergeNoChanges {
					s.State, s.Why, s.Take = mergeSkipped, fmt.Sprintf("it depends on %s, which is not applied", markdown.Quote(dep)), false
					break
				}
			}
		}
		settled[l.Name] = s.State
		out = append(out, s)
	}
	return out
}

// mergeRecovery says how to apply a layer whose merge applied nothing for
// want of an approval: a merged PR can no longer be reviewed nor approved,
// so what was merged is applied from a new pull request, whose plan of the
// default branch gets the approvals (need) like any other.
func mergeRecovery(layer, need string) string {
	return fmt.Sprintf("nothing was applied. To apply what was merged, comment %s on a new pull request, get %s for that plan, then %s",
		markdown.Quote("/plan "+layer), need, markdown.Quote("/apply "+layer))
}

// mergePolicyRefusal is why the policy gate keeps a merged PR's reviewed
// plan from being applied, "" when it lets it: a block set denied the plan
// and no owner approved it before the merge, or no set had judged it.
func mergePolicyRefusal(layer string, v policyVerdict) string {
	approve := "an owner's " + markdown.Quote("/approve-policies "+layer) + " if its policy sets deny it"
	switch v.State {
	case policyPending:
		return fmt.Sprintf("its policy sets had not judged the reviewed plan when the pull request merged (%s); %s",
			markdown.Quote("strata/policy: "+layer), mergeRecovery(layer, approve))
	case policyBlocked:
		parts := make([]string, len(v.Unapproved))
		for i, s := range v.Unapproved {
			parts[i] = fmt.Sprintf("set %s (owners: %s)", markdown.Quote(s.Name), ownerNames(s.Owners))
		}
		return fmt.Sprintf("blocked by policy: the reviewed plan is denied by %s, and no owner approved it with %s before the merge; %s",
			strings.Join(parts, " and "), markdown.Quote("/approve-policies "+layer), mergeRecovery(layer, approve))
	}
	return ""
}

// changeDiff is an address whose change differs between the reviewed plan
// and the plan at the merge commit: its actions (nil where that plan does
// not change it), or its planned values.
type changeDiff struct {
	Address          string
	Reviewed, Merged []string
	Values           []valueDiff
}

// valueDiff is a planned value that differs; a sensitive one (or one kept
// as its digest) is named, never shown.
type valueDiff struct {
	Path             string
	Reviewed, Merged string
	Hidden           bool
}

// plansEquivalent compares the reviewed plan's changes with those of the
// plan at the merge commit: the same addresses, with the same actions and
// planned values. A value the reviewed plan knew only after apply matches
// any value (the reviewer accepted whatever it becomes); one known in the
// reviewed plan must be the same known value. It returns the differences,
// none when the plans are equivalent.
func plansEquivalent(reviewed, merged []terraform.PlannedChange) []changeDiff {
	r, m := byAddress(reviewed), byAddress(merged)
	addrs := map[string]bool{}
	for a := range r {
		addrs[a] = true
	}
	for a := range m {
		addrs[a] = true
	}
	var out []changeDiff
	for _, a := range sortedKeys(addrs) {
		rc, mc := r[a], m[a]
		switch {
		case rc == nil:
			out = append(out, changeDiff{Address: a, Merged: mc.Actions})
		case mc == nil:
			out = append(out, changeDiff{Address: a, Reviewed: rc.Actions})
		case strings.Join(rc.Actions, ",") != strings.Join(mc.Actions, ","):
			out = append(out, changeDiff{Address: a, Reviewed: rc.Actions, Merged: mc.Actions})
		default:
			if vs := valuesDiffer(rc, mc); len(vs) > 0 {
				out = append(out, changeDiff{Address: a, Reviewed: rc.Actions, Merged: mc.Actions, Values: vs})
			}
		}
	}
	return out
}

func byAddress(cs []terraform.PlannedChange) map[string]*terraform.PlannedChange {
	out := map[string]*terraform.PlannedChange{}
	for i := range cs {
		out[cs[i].Address] = &cs[i]
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// valuesDiffer lists the planned values of one address that differ.
func valuesDiffer(r, m *terraform.PlannedChange) []valueDiff {
	paths := map[string]bool{}
	for p := range r.Values {
		paths[p] = true
	}
	for p := range m.Values {
		paths[p] = true
	}
	hidden := map[string]bool{}
	for _, p := range append(append([]string(nil), r.Sensitive...), m.Sensitive...) {
		hidden[p] = true
	}
	var out []valueDiff
	for _, p := range sortedKeys(paths) {
		if unknownAt(r.Values, p) {
			continue
		}
		rv, rok := r.Values[p]
		mv, mok := m.Values[p]
		if rok && mok && rv == mv {
			continue
		}
		d := valueDiff{Path: p, Reviewed: rv, Merged: mv}
		if !rok {
			d.Reviewed = "(absent)"
		}
		if !mok {
			d.Merged = "(absent)"
		}
		d.Hidden = hidden[p] || strings.HasPrefix(rv, terraform.DigestPrefix) || strings.HasPrefix(mv, terraform.DigestPrefix)
		out = append(out, d)
	}
	return out
}

// unknownAt says whether the reviewed plan knew the value at path, or at a
// path that holds it, only after apply.
func unknownAt(values map[string]string, path string) bool {
	for p := path; ; {
		if values[p] == terraform.UnknownValue {
			return true
		}
		i := strings.LastIndexAny(p, ".[")
		if i <= 0 {
			return p != "" && values[""] == terraform.UnknownValue
		}
		p = p[:i]
	}
}

// maxDiffs bounds the differences a comment lists.
const maxDiffs = 30

// diffText is the differences as a Markdown list: addresses, actions and
// values, a hidden value only named. Everything from the plan is quoted.
func diffText(diffs []changeDiff) string {
	var b strings.Builder
	for i, d := range diffs {
		if i == maxDiffs {
			n := len(diffs) - maxDiffs
			fmt.Fprintf(&b, "- … and %d more %s (the run's log has the plan)\n", n, words.Plural(n, "address", "addresses"))
			break
		}
		fmt.Fprintf(&b, "- %s: reviewed %s, now %s\n", markdown.Quote(d.Address), actionsText(d.Reviewed), actionsText(d.Merged))
		for j, v := range d.Values {
			if j == maxDiffs {
				fmt.Fprintf(&b, "  - … and %d more values\n", len(d.Values)-maxDiffs)
				break
			}
			if v.Hidden {
				fmt.Fprintf(&b, "  - %s: changed (sensitive or too long to show)\n", markdown.Quote(v.Path))
				continue
			}
			fmt.Fprintf(&b, "  - %s: %s → %s\n", markdown.Quote(pathText(v.Path)), markdown.Quote(v.Reviewed), markdown.Quote(v.Merged))
		}
	}
	return b.String()
}

func actionsText(actions []string) string {
	if len(actions) == 0 {
		return "no change"
	}
	return strings.Join(actions, " and ")
}

func pathText(p string) string {
	if p == "" {
		return "(the whole value)"
	}
	return p
}
