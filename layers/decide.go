package layers

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/ghretry"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/store"
	"strata.dev/strata/words"
)

// The decisions of the layers capability, as pure functions of facts the
// caller read (the PR through pull.Context, store rows, config). The
// commands do the I/O around them; table tests call them directly.

// staleMessage is the refusal of an apply whose plan is not of the head.
const staleMessage = "plan is stale, run /plan"

// planTargets decides which layers a /plan targets: the layers named (by
// name or dir), or every layer the PR's files touch, in its dir or through
// its local modules. A refusal is the reply the user reads.
func planTargets(all []config.Layer, names, changed []string, modules layerModules) ([]config.Layer, string) {
	if len(names) > 0 {
		layers, err := pickLayers(all, names)
		if err != nil {
			return nil, err.Error()
		}
		return layers, ""
	}
	if layers := touchedLayers(all, changed, modules, false); len(layers) > 0 {
		return layers, ""
	}
	return nil, "this pull request touches no layer; name one: `/plan LAYER`. Layers: " + report.Names(layerNames(all))
}

// applyTargets decides which layers an /apply targets: those named, or
// every layer the PR has a plan of.
func applyTargets(all []config.Layer, names []string, plans []*store.Plan) ([]config.Layer, string) {
	if len(names) > 0 {
		layers, err := pickLayers(all, names)
		if err != nil {
			return nil, err.Error()
		}
		return layers, ""
	}
	planned := map[string]bool{}
	for _, p := range plans {
		planned[p.Layer] = true
	}
	var layers []config.Layer
	for _, l := range all {
		if planned[l.Name] {
			layers = append(layers, l)
		}
	}
	if len(layers) == 0 {
		return nil, "this pull request has no plan to apply; comment `/plan` first."
	}
	return layers, ""
}

// applyFacts are what an /apply is decided on.
type applyFacts struct {
	PR   int
	Head string
	// Layers are the targets; All every layer of the repo.
	Layers, All []config.Layer
	// Plans are the PR's plans; Locks the holder PR of each locked layer;
	// Applies the last apply of each target layer (its generation).
	Plans   []*store.Plan
	Locks   map[string]int
	Applies map[string]store.LayerApplied
	// Requirements are the PR's facts the layers' apply requirements need.
	Requirements requirementFacts
	// Policy is each target's policy facts (decide_policy.go).
	Policy map[string]policyFacts
}

// applyDecision is what /apply does: apply Run in that order (having
// taken the locks of the layers in Take, lock: on_apply), or refuse the
// layers in Refuse with Reason (their apply checks fail), or only Reply.
type applyDecision struct {
	Run    []config.Layer
	Take   []string
	Refuse []string
	Reason string
	Reply  string
}

// decideApply checks that each plan is of the head, unapplied, not made
// before another apply of its layer, and locked by the PR (or, with
// lock: on_apply, by no other PR), then the layers' apply requirements
// (from the default branch) and dependencies. Who may apply is decided before, by the permission table.
func decideApply(f applyFacts) applyDecision {
	atHead := plansAt(f.Plans, f.Head)
	var todo []config.Layer
	var done, take []string
	for _, l := range f.Layers {
		p := atHead[l.Name]
		switch {
		case p == nil:
			return applyDecision{Refuse: []string{l.Name}, Reason: fmt.Sprintf("%s: %s", markdown.Quote(l.Name), staleMessage)}
		case !p.AppliedAt.IsZero():
			done = append(done, l.Name)
			continue
		}
		holder, held := f.Locks[l.Name]
		why, takes := lockForApply(l, f.PR, holder, held, p, f.Applies[l.Name])
		if why != "" {
			return applyDecision{Refuse: []string{l.Name}, Reason: why}
		}
		if takes {
			take = append(take, l.Name)
		}
		todo = append(todo, l)
	}
	if len(todo) == 0 {
		return applyDecision{Reply: fmt.Sprintf("%s already applied at %s.", report.Names(done), report.Short(f.Head))}
	}
	for _, l := range todo {
		if why := unmetRequirement(l, f.Requirements); why != "" {
			return applyDecision{Refuse: []string{l.Name}, Reason: fmt.Sprintf("%s: %s", markdown.Quote(l.Name), why)}
		}
		if why := policyGate(f.Policy[l.Name]).refusal(l.Name); why != "" {
			return applyDecision{Refuse: []string{l.Name}, Reason: why}
		}
	}
	if why := unmetDependencies(todo, atHead); why != "" {
		return applyDecision{Refuse: layerNames(todo), Reason: why}
	}
	ordered, err := dependencyOrder(todo)
	if err != nil {
		return applyDecision{Refuse: layerNames(todo), Reason: err.Error()}
	}
	return applyDecision{Run: ordered, Take: take}
}

func plansAt(plans []*store.Plan, head string) map[string]*store.Plan {
	out := map[string]*store.Plan{}
	for _, p := range plans {
		if p.HeadSHA == head {
			out[p.Layer] = p
		}
	}
	return out
}

// requirementFacts are the PR's facts that apply requirements look at. The
// caller reads only those the layers require (needs says which).
type requirementFacts struct {
	Author string
	// Head is the commit the plans are of; approvals count for it only.
	Head    string
	Reviews []pull.Review
	// Reviewers holds the permission of each user whose latest review
	// approves.
	Reviewers map[string]pull.Permission
	Conflicts bool
	Statuses  []pull.Status
	BaseRef   string
	BehindBy  int
	// Codeowners are read when a layer requires codeowners (codeowners.go).
	Codeowners codeownersFacts
}

// needs reports whether any layer requires req.
func needs(layers []config.Layer, req config.ApplyRequirement) bool {
	for _, l := range layers {
		for _, r := range l.ApplyRequirements {
			if r == req {
				return true
			}
		}
	}
	return false
}

// unmetRequirement says which apply requirement of layer l the PR misses,
// or "".
func unmetRequirement(l config.Layer, f requirementFacts) string {
	for _, req := range l.ApplyRequirements {
		switch req {
		case config.Approved:
			if why := unapproved(f); why != "" {
				return why
			}
		case config.Mergeable:
			if why := unmergeable(f.Conflicts, f.Statuses); why != "" {
				return why
			}
		case config.Undiverged:
			if f.BehindBy > 0 {
				return fmt.Sprintf("it requires the branch to contain the tip of %s, which is %d %s ahead; update the branch and plan again",
					f.BaseRef, f.BehindBy, words.Plural(f.BehindBy, "commit", "commits"))
			}
		case config.CodeOwners:
			if why := unmetCodeowners(l.Name, f); why != "" {
				return why
			}
		}
	}
	return ""
}

// approvals are the reviews that stand: each reviewer's latest review that
// approves, requests changes or was dismissed (a comment changes nothing),
// keeping those that approve, in review order.
func approvals(reviews []pull.Review) []pull.Review {
	latest := map[string]int{}
	var order []string
	for i, r := range reviews {
		switch r.State {
		case "APPROVED", "CHANGES_REQUESTED", "DISMISSED":
			if _, seen := latest[r.Author]; !seen {
				order = append(order, r.Author)
			}
			latest[r.Author] = i
		}
	}
	var out []pull.Review
	for _, user := range order {
		if r := reviews[latest[user]]; r.State == "APPROVED" {
			out = append(out, r)
		}
	}
	return out
}

// unapproved says why no approval counts, or "". An approval counts only
// when its reviewer is not the PR's author, has write permission or more,
// and reviewed the head commit the plans are of: an approval of an earlier
// commit did not see what is applied, and a reader's approval is no review.
func unapproved(f requirementFacts) string {
	const need = "it requires an approving review by someone other than the author, with write permission, of the head commit"
	var why []string
	for _, r := range approvals(f.Reviews) {
		switch perm := f.Reviewers[r.Author]; {
		case strings.EqualFold(r.Author, f.Author):
			why = append(why, "the author's own approval does not count")
		case !perm.AtLeast(pull.Write):
			if perm == "" || perm == pull.None {
				perm = "no"
			}
			why = append(why, fmt.Sprintf("@%s has %s permission, so their approval does not count", r.Author, perm))
		case r.CommitID != f.Head:
			why = append(why, fmt.Sprintf("@%s approved %s, not the head %s", r.Author, report.Short(r.CommitID), report.Short(f.Head)))
		default:
			return ""
		}
	}
	if len(why) == 0 {
		return need
	}
	return need + ": " + strings.Join(why, "; ")
}

// unmergeable: conflicts, or a failing check or status on the head other
// than Strata's own, so that `strata/applied` as a required check (pending
// until the apply) cannot keep the apply from happening.
func unmergeable(conflicts bool, statuses []pull.Status) string {
	if conflicts {
		return "it requires the pull request to merge without conflicts"
	}
	for _, s := range statuses {
		if strings.HasPrefix(s.Name, "strata/") {
			continue
		}
		switch s.Outcome {
		case "failure", "timed_out", "cancelled", "action_required", "error":
			return fmt.Sprintf("it requires passing checks, and %s is %s", markdown.Quote(s.Name), s.Outcome)
		}
	}
	return ""
}

// unmetDependencies refuses a layer whose depends_on layer has changes
// planned at this head that are not applied and not part of this apply.
func unmetDependencies(todo []config.Layer, atHead map[string]*store.Plan) string {
	inApply := map[string]bool{}
	for _, l := range todo {
		inApply[l.Name] = true
	}
	for _, l := range todo {
		for _, dep := range l.DependsOn {
			p := atHead[dep]
			if inApply[dep] || p == nil || !p.HasChanges || !p.AppliedAt.IsZero() {
				continue
			}
			return fmt.Sprintf("%s depends on %s, whose plan is not applied yet; apply %s first (or both together).", markdown.Quote(l.Name), markdown.Quote(dep), markdown.Quote(dep))
		}
	}
	return ""
}

// dependencyOrder sorts layers so that each comes after the layers it
// depends on (among those given); ties keep config order.
func dependencyOrder(layers []config.Layer) ([]config.Layer, error) {
	index := map[string]int{}
	for i, l := range layers {
		index[l.Name] = i
	}
	state := make([]int, len(layers)) // 0 new, 1 visiting, 2 done
	var out []config.Layer
	var visit func(i int) error
	visit = func(i int) error {
		switch state[i] {
		case 1:
			return fmt.Errorf("layers depend on each other in a cycle through %s", markdown.Quote(layers[i].Name))
		case 2:
			return nil
		}
		state[i] = 1
		deps := append([]string(nil), layers[i].DependsOn...)
		sort.Strings(deps)
		for _, dep := range deps {
			if j, ok := index[dep]; ok {
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		state[i] = 2
		out = append(out, layers[i])
		return nil
	}
	for i := range layers {
		if err := visit(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// planOutcome is how a plan run ends, named, so that the worker acts once
// per outcome instead of threading flags.
type planOutcome string

const (
	// planSuperseded: the PR moved to a newer head while it ran.
	planSuperseded planOutcome = "superseded"
	// planCancelled: someone asked for it with /cancel while it ran;
	// Terraform was interrupted, then killed after the grace period.
	planCancelled planOutcome = "cancelled"
	// planRetry: Strata's side failed (fetching, the store), attempts are
	// left: the job runs again.
	planRetry planOutcome = "retry"
	// planToolFailed: Terraform failed; the check shows its message.
	planToolFailed planOutcome = "tool failed"
	// planInfraFailed: Strata's side failed on the last attempt.
	planInfraFailed planOutcome = "infrastructure failed"
	planPlanned     planOutcome = "planned"
)

// cancelledBy stops a plan that a user cancelled with /cancel.
type cancelledBy struct{ User string }

func (c cancelledBy) Error() string { return "@" + c.User + " cancelled it with `/cancel`" }

// planOutcomeOf names how a plan run ended: stopped is why its run was
// stopped while it ran (errSuperseded, a cancelledBy; nil when nothing
// stopped it), err is the engine's, attempt of maxAttempts the job's.
func planOutcomeOf(stopped, err error, attempt, maxAttempts int) planOutcome {
	switch {
	case errors.Is(stopped, errSuperseded):
		return planSuperseded
	case errors.As(stopped, new(cancelledBy)):
		return planCancelled
	case err == nil:
		return planPlanned
	case toolFailed(err):
		return planToolFailed
	case planRetries(err, attempt, maxAttempts):
		return planRetry
	}
	return planInfraFailed
}

// planRetries reports whether a plan that failed with err runs again:
// Strata's side failed (fetching, the store) and attempts are left. A plan
// Terraform failed, or the sandbox refused (the same kernel will refuse
// again), does not. GitHub's rate limit retries on the last attempt too:
// the queue waits for its reset without spending an attempt
// (queue/ratelimit.go), and reporting the failure would need GitHub.
func planRetries(err error, attempt, maxAttempts int) bool {
	if ghretry.Limited(err) {
		return true
	}
	return !toolFailed(err) && !errors.Is(err, sandbox.ErrUnavailable) && attempt < maxAttempts
}

// toolFailed reports whether Terraform (or its version) failed.
func toolFailed(err error) bool {
	var tfErr *terraform.Error
	return errors.As(err, &tfErr) || errors.As(err, new(*terraform.VersionError))
}

// unlockTargets are the locks an /unlock releases: of the PR's locks, those
// named (by layer name), or all of them when none is named.
func unlockTargets(held []*store.Lock, names []string) []*store.Lock {
	if len(names) == 0 {
		return held
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var out []*store.Lock
	for _, l := range held {
		if want[l.Layer] {
			out = append(out, l)
		}
	}
	return out
}

// lockOutcome is what taking a layer's lock for a plan gave.
type lockOutcome string

const (
	// lockBlocked: another PR holds it; the plan check fails naming it.
	lockBlocked lockOutcome = "blocked"
	// lockShown: this PR holds it and its check is on this head.
	lockShown lockOutcome = "shown"
	// lockMove: this PR holds it; its check must move to this head (or be
	// created, for a lock just taken).
	lockMove lockOutcome = "move"
	// lockFree: nobody holds it and the plan takes none (lock: on_apply).
	lockFree lockOutcome = "free"
)

// lockOutcomeOf names the outcome of TryLock (lockForPlan) for a plan of
// pr at head: held is the lock as it was before this plan took it (or
// another PR's), nil when the plan took none.
func lockOutcomeOf(held *store.Lock, acquired bool, head string) lockOutcome {
	switch {
	case !acquired:
		return lockBlocked
	case held == nil:
		return lockFree
	case held.CheckRunID != 0 && held.HeadSHA == head:
		return lockShown
	}
	return lockMove
}
