package layers

import (
	"reflect"
	"strings"
	"testing"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/pull"
	"strata.dev/strata/store"
)

// Which layers a merge applies: a reviewed plan with changes at the merged
// head, the requirements that still hold after a merge, the lock, and the
// layers each depends on.
func TestApplyOnMerge(t *testing.T) {
	reviewedAll := map[string]bool{"network": true, "dns": true, "app": true}
	approvedByBob := requirementFacts{Author: "alice", Head: head, Reviews: []pull.Review{{Author: "bob", State: "APPROVED", CommitID: head}},
		Reviewers: map[string]pull.Permission{"bob": pull.Write}}
	strict := func(l config.Layer, reqs ...config.ApplyRequirement) config.Layer {
		l.ApplyRequirements = reqs
		return l
	}
	type want struct {
		layer string
		state mergeState
		why   string
		take  bool
	}
	for _, tc := range []struct {
		name     string
		layers   []config.Layer
		plans    []*store.Plan
		reviewed map[string]bool
		locks    map[string]int
		merging  map[string]bool
		reqs     requirementFacts
		policy   map[string]policyFacts
		want     []want
	}{
		{name: "reviewed plan, lock held: queued", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7},
			want: []want{{"network", mergeQueued, "", false}}},
		{name: "lock: on_apply, nobody holds it: queued, takes it", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)},
			want:  []want{{"network", mergeQueued, "", true}}},
		{name: "merged without a plan of its head", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", oldHead, true, false)}, locks: map[string]int{"network": 7},
			want: []want{{"network", mergeRefused, "merged without a plan of its head 1111111", false}}},
		{name: "applied with /apply before the merge", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, true)}, locks: map[string]int{"network": 7},
			want: []want{{"network", mergeApplied, "applied with /apply before the merge", false}}},
		{name: "reviewed plan without changes", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, false, false)}, locks: map[string]int{"network": 7},
			want: []want{{"network", mergeNoChanges, "changes nothing", false}}},
		{name: "changes not kept: cannot compare", layers: []config.Layer{network}, reviewed: map[string]bool{},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7},
			want: []want{{"network", mergeRefused, "cannot be compared", false}}},
		{name: "another PR holds the lock", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 8},
			want: []want{{"network", mergeRefused, "#8 holds its lock", false}}},
		{name: "a PR merged before holds the lock until its apply ends: queued after it", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 8}, merging: map[string]bool{"network": true},
			want: []want{{"network", mergeQueued, "", true}}},
		{name: "approved required, none", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7},
			reqs: requirementFacts{Author: "alice", Head: head},
			want: []want{{"network", mergeRefused, "requires an approving review", false}}},
		{name: "approved required, approved at the head", layers: []config.Layer{strict(network, config.Approved)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7}, reqs: approvedByBob,
			want: []want{{"network", mergeQueued, "", false}}},
		{name: "mergeable and undiverged mean nothing after the merge", layers: []config.Layer{strict(network, config.Mergeable, config.Undiverged)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7},
			reqs: requirementFacts{Conflicts: true, BehindBy: 3, BaseRef: "main"},
			want: []want{{"network", mergeQueued, "", false}}},
		{name: "codeowners required, facts read, no owner approved", layers: []config.Layer{strict(network, config.CodeOwners)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7},
			reqs: requirementFacts{Author: "alice", Head: head, Codeowners: codeownersFacts{Read: true, Branch: "main", File: "CODEOWNERS",
				Rules: rulesOf(t, "/infra/network/ @acme/network\n"), Files: map[string][]string{"network": {"infra/network/main.tf"}}}},
			want: []want{{"network", mergeRefused, "still needed: `infra/network/main.tf` by `@acme/network`; nothing was applied. " +
				"To apply what was merged, comment `/plan network` on a new pull request, get the approvals it requires for that plan, then `/apply network`", false}}},
		{name: "codeowners required, a code owner approved the head", layers: []config.Layer{strict(network, config.CodeOwners)},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7},
			reqs: requirementFacts{Author: "alice", Head: head, Reviews: []pull.Review{{Author: "bob", State: "APPROVED", CommitID: head}},
				Reviewers: map[string]pull.Permission{"bob": pull.Write}, Codeowners: codeownersFacts{Read: true, Branch: "main", File: "CODEOWNERS",
					Rules: rulesOf(t, "/infra/network/ @bob\n"), Files: map[string][]string{"network": {"infra/network/main.tf"}}}},
			want: []want{{"network", mergeQueued, "", false}}},
		{name: "policy blocked and not approved", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7},
			policy: map[string]policyFacts{"network": judged(guardDenies)},
			want: []want{{"network", mergeRefused, "blocked by policy: the reviewed plan is denied by set `guard` (owners: @carol or @acme/security), " +
				"and no owner approved it with `/approve-policies network` before the merge; nothing was applied. To apply what was merged, " +
				"comment `/plan network` on a new pull request, get an owner's `/approve-policies network` if its policy sets deny it for that plan, then `/apply network`", false}}},
		{name: "policy blocked, approved by an owner", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7},
			policy: map[string]policyFacts{"network": judged(guardDenies, "guard")},
			want:   []want{{"network", mergeQueued, "", false}}},
		{name: "policy not judged when it merged", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7},
			policy: map[string]policyFacts{"network": {Judged: true, Plan: plan("network", head, true, false)}},
			want:   []want{{"network", mergeRefused, "its policy sets had not judged the reviewed plan when the pull request merged (`strata/policy: network`)", false}}},
		{name: "policy warns only", layers: []config.Layer{network},
			plans: []*store.Plan{plan("network", head, true, false)}, locks: map[string]int{"network": 7},
			policy: map[string]policyFacts{"network": judged(setOutcome{Name: "style", Enforcement: config.Warn, DenialCount: 2})},
			want:   []want{{"network", mergeQueued, "", false}}},
		{name: "depends_on a layer blocked by policy: skipped", layers: []config.Layer{network, app},
			plans: []*store.Plan{plan("network", head, true, false), plan("app", head, true, false)}, locks: map[string]int{"network": 7, "app": 7},
			policy: map[string]policyFacts{"network": judged(guardDenies)},
			want:   []want{{"network", mergeRefused, "blocked by policy", false}, {"app", mergeSkipped, "depends on `network`", false}}},
		{name: "depends_on: network first, even listed last", layers: []config.Layer{app, network},
			plans: []*store.Plan{plan("network", head, true, false), plan("app", head, true, false)}, locks: map[string]int{"network": 7, "app": 7},
			want: []want{{"network", mergeQueued, "", false}, {"app", mergeQueued, "", false}}},
		{name: "depends_on a refused layer: skipped", layers: []config.Layer{network, app},
			plans: []*store.Plan{plan("app", head, true, false)}, locks: map[string]int{"network": 7, "app": 7},
			want: []want{{"network", mergeRefused, "without a plan", false}, {"app", mergeSkipped, "depends on `network`", false}}},
		{name: "depends_on a layer with nothing to apply: queued", layers: []config.Layer{network, app},
			plans: []*store.Plan{plan("network", head, false, false), plan("app", head, true, false)}, locks: map[string]int{"network": 7, "app": 7},
			want: []want{{"network", mergeNoChanges, "changes nothing", false}, {"app", mergeQueued, "", false}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reviewed := tc.reviewed
			if reviewed == nil {
				reviewed = reviewedAll
			}
			got := applyOnMerge(mergeFacts{PR: 7, Head: head, Layers: tc.layers, Plans: tc.plans, Reviewed: reviewed, Locks: tc.locks, Merging: tc.merging, Requirements: tc.reqs, Policy: tc.policy})
			if len(got) != len(tc.want) {
				t.Fatalf("got %d steps, want %d: %+v", len(got), len(tc.want), got)
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Layer.Name != w.layer || g.State != w.state || g.Take != w.take || !strings.Contains(g.Why, w.why) || (w.why == "" && g.Why != "") {
					t.Errorf("step %d = %s %q %q take=%v, want %s %q %q take=%v", i, g.Layer.Name, g.State, g.Why, g.Take, w.layer, w.state, w.why, w.take)
				}
			}
		})
	}
}

// guardDenies is a block set that denies the reviewed plan.
var guardDenies = setOutcome{Name: "guard", Enforcement: config.Block, Owners: []string{"carol", "@acme/security"}, DenialCount: 1}

// judged is the policy facts of the reviewed plan at head (plan() makes
// it at the zero time) judged by sets, with the named sets approved.
func judged(set setOutcome, approved ...string) policyFacts {
	f := policyFacts{Judged: true, Plan: &store.Plan{Layer: "network", HeadSHA: head}, Evaluation: &store.PolicyEvaluation{HeadSHA: head},
		Sets: []setOutcome{set}}
	for _, a := range approved {
		f.Approvals = append(f.Approvals, store.PolicyApproval{Set: a, HeadSHA: head, Approver: "carol"})
	}
	return f
}

// Two plans make the same changes when they change the same addresses with
// the same actions and planned values; a value the reviewed plan knew only
// after apply matches anything, a known one must stay the same.
func TestPlansEquivalent(t *testing.T) {
	thing := func(addr string, actions []string, values map[string]string, sensitive ...string) terraform.PlannedChange {
		return terraform.PlannedChange{Address: addr, Actions: actions, Values: values, Sensitive: sensitive}
	}
	update, create := []string{"update"}, []string{"create"}
	replace := []string{"delete", "create"}
	a := thing("world_thing.a", update, map[string]string{"name": `"a"`, "value": `"two"`, "id": terraform.UnknownValue})
	for _, tc := range []struct {
		name             string
		reviewed, merged []terraform.PlannedChange
		want             []changeDiff
	}{
		{name: "the same", reviewed: []terraform.PlannedChange{a}, merged: []terraform.PlannedChange{a}},
		{name: "both change nothing"},
		{name: "unknown in the review, known now: the same",
			reviewed: []terraform.PlannedChange{a},
			merged:   []terraform.PlannedChange{thing("world_thing.a", update, map[string]string{"name": `"a"`, "value": `"two"`, "id": `"i-123"`})}},
		{name: "a whole object unknown in the review matches its leaves now",
			reviewed: []terraform.PlannedChange{thing("world_thing.a", create, map[string]string{"tags": terraform.UnknownValue})},
			merged:   []terraform.PlannedChange{thing("world_thing.a", create, map[string]string{"tags.env": `"prod"`, "tags.team": `"x"`})}},
		{name: "known in the review, unknown now: differs",
			reviewed: []terraform.PlannedChange{thing("world_thing.a", update, map[string]string{"id": `"i-123"`})},
			merged:   []terraform.PlannedChange{thing("world_thing.a", update, map[string]string{"id": terraform.UnknownValue})},
			want:     []changeDiff{{Address: "world_thing.a", Reviewed: update, Merged: update, Values: []valueDiff{{Path: "id", Reviewed: `"i-123"`, Merged: terraform.UnknownValue}}}}},
		{name: "a planned value changed",
			reviewed: []terraform.PlannedChange{a},
			merged:   []terraform.PlannedChange{thing("world_thing.a", update, map[string]string{"name": `"a"`, "value": `"three"`, "id": terraform.UnknownValue})},
			want:     []changeDiff{{Address: "world_thing.a", Reviewed: update, Merged: update, Values: []valueDiff{{Path: "value", Reviewed: `"two"`, Merged: `"three"`}}}}},
		{name: "a sensitive value changed: hidden",
			reviewed: []terraform.PlannedChange{thing("world_thing.a", update, map[string]string{"secret": "sha256:aa"}, "secret")},
			merged:   []terraform.PlannedChange{thing("world_thing.a", update, map[string]string{"secret": "sha256:bb"}, "secret")},
			want:     []changeDiff{{Address: "world_thing.a", Reviewed: update, Merged: update, Values: []valueDiff{{Path: "secret", Reviewed: "sha256:aa", Merged: "sha256:bb", Hidden: true}}}}},
		{name: "an attribute gone",
			reviewed: []terraform.PlannedChange{thing("world_thing.a", update, map[string]string{"tags.env": `"prod"`})},
			merged:   []terraform.PlannedChange{thing("world_thing.a", update, map[string]string{})},
			want:     []changeDiff{{Address: "world_thing.a", Reviewed: update, Merged: update, Values: []valueDiff{{Path: "tags.env", Reviewed: `"prod"`, Merged: "(absent)"}}}}},
		{name: "other actions: update became replace",
			reviewed: []terraform.PlannedChange{a},
			merged:   []terraform.PlannedChange{thing("world_thing.a", replace, a.Values)},
			want:     []changeDiff{{Address: "world_thing.a", Reviewed: update, Merged: replace}}},
		{name: "an address more, an address less",
			reviewed: []terraform.PlannedChange{a},
			merged:   []terraform.PlannedChange{thing("world_thing.b", create, map[string]string{"name": `"b"`})},
			want:     []changeDiff{{Address: "world_thing.a", Reviewed: update}, {Address: "world_thing.b", Merged: create}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := plansEquivalent(tc.reviewed, tc.merged)
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("diffs =\n%#v\nwant\n%#v", got, tc.want)
			}
		})
	}
}

// The difference a PR is told: addresses, actions, values; a hidden value
// named, never shown; text from the plan quoted.
func TestDiffText(t *testing.T) {
	got := diffText([]changeDiff{
		{Address: "world_thing.a", Reviewed: []string{"update"}, Merged: []string{"update"}, Values: []valueDiff{
			{Path: "value", Reviewed: `"two"`, Merged: `"three"`}, {Path: "secret", Reviewed: "sha256:aa", Merged: "sha256:bb", Hidden: true}}},
		{Address: "world_thing.b`x", Merged: []string{"create"}},
	})
	want := "- `world_thing.a`: reviewed update, now update\n" +
		"  - `value`: `\"two\"` → `\"three\"`\n" +
		"  - `secret`: changed (sensitive or too long to show)\n" +
		"- ``world_thing.b`x``: reviewed no change, now create\n"
	if got != want {
		t.Fatalf("diffText =\n%s\nwant\n%s", got, want)
	}
}
