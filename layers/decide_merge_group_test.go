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

func TestLastOfGroup(t *testing.T) {
	for ref, want := range map[string]int{
		"refs/heads/gh-readonly-queue/main/pr-42-" + head:      42,
		"refs/heads/gh-readonly-queue/release/v1/pr-7-" + head: 7,
		"refs/heads/gh-readonly-queue/main/pr-42-1111":         0, // not a SHA
		"refs/heads/main": 0,
		"refs/heads/feature/gh-readonly-queue/main/pr-42-" + head:     0,
		"refs/heads/gh-readonly-queue/main/pr-x-" + head:              0,
		"refs/heads/gh-readonly-queue/main/pr-42-" + head + "-suffix": 0,
	} {
		if got := lastOfGroup(ref); got != want {
			t.Errorf("lastOfGroup(%q) = %d, want %d", ref, got, want)
		}
	}
}

// A group's pull requests: each first-parent commit of the group is the
// queue's commit for one of them: a merge names it through its second
// parent (the PR's head), a squashed commit through itself.
func TestGroupMembers(t *testing.T) {
	// base <- m1 (merges h1, whose parent c1) <- m2 (merges h2) <- s3 (squash)
	commits := []groupCommit{
		{SHA: "c1", Parents: []string{"base"}}, {SHA: "h1", Parents: []string{"c1"}},
		{SHA: "m1", Parents: []string{"base", "h1"}},
		{SHA: "h2", Parents: []string{"base"}}, {SHA: "m2", Parents: []string{"m1", "h2"}},
		{SHA: "s3", Parents: []string{"m2"}},
	}
	open := func(n int) groupPull { return groupPull{Number: n, State: "open", BaseRef: "main"} }
	for _, tc := range []struct {
		name    string
		head    string
		pulls   map[string][]groupPull
		last    int
		members []int
		unknown []string
	}{
		{name: "merges and a squash, in queue order", head: "s3", last: 3,
			pulls:   map[string][]groupPull{"h1": {open(1)}, "h2": {open(2)}, "s3": {open(3)}},
			members: []int{1, 2, 3}},
		{name: "the ref's PR counts though GitHub associates nothing with the head", head: "s3", last: 3,
			pulls:   map[string][]groupPull{"h1": {open(1)}, "h2": {open(2)}},
			members: []int{1, 2, 3}},
		{name: "a commit nobody claims", head: "s3", last: 3,
			pulls:   map[string][]groupPull{"h2": {open(2)}},
			members: []int{2, 3}, unknown: []string{"m1"}},
		{name: "closed PRs and PRs into another base do not count", head: "m2", last: 2,
			pulls: map[string][]groupPull{"h1": {{Number: 9, State: "closed", BaseRef: "main"}, {Number: 8, State: "open", BaseRef: "dev"}},
				"h2": {open(2)}},
			members: []int{2}, unknown: []string{"m1"}},
		{name: "a PR listed twice counts once", head: "m2",
			pulls:   map[string][]groupPull{"h1": {open(1)}, "h2": {open(1), open(2)}},
			members: []int{1, 2}},
		{name: "no ref PR, head unclaimed", head: "m2",
			pulls:   map[string][]groupPull{"h1": {open(1)}},
			members: []int{1}, unknown: []string{"m2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			members, unknown := groupMembers(tc.head, commits, tc.pulls, "main", tc.last)
			if !reflect.DeepEqual(members, tc.members) || !reflect.DeepEqual(unknown, tc.unknown) {
				t.Fatalf("members %v, unknown %v; want %v, %v", members, unknown, tc.members, tc.unknown)
			}
		})
	}
}

// Whether each layer of each PR of a group is ready to merge.
func TestDecideMergeGroup(t *testing.T) {
	onMerge := network
	onMerge.AutoApply = config.AutoApplyOnMerge
	strictOnMerge, mergeableOnMerge := onMerge, onMerge
	strictOnMerge.ApplyRequirements = []config.ApplyRequirement{config.Approved}
	mergeableOnMerge.ApplyRequirements = []config.ApplyRequirement{config.Mergeable}
	approvedByBob := requirementFacts{Author: "alice", Head: head, Reviews: []pull.Review{{Author: "bob", State: "APPROVED", CommitID: head}},
		Reviewers: map[string]pull.Permission{"bob": pull.Write}}
	lastBy := func(pr int, sha string) store.LayerApplied {
		return store.LayerApplied{Generation: 1, PR: pr, HeadSHA: sha}
	}
	type want struct {
		state groupState
		why   string
	}
	for _, tc := range []struct {
		name     string
		layer    config.Layer
		plans    []*store.Plan
		reviewed bool
		last     store.LayerApplied
		want     want
		reqs     requirementFacts
		policy   policyFacts
	}{
		{"applied, the layer's last apply", network, []*store.Plan{plan("network", head, true, true)}, false, lastBy(7, head),
			want{groupApplied, "applied at 1111111"}, requirementFacts{}, policyFacts{}},
		{"applied, another PR applied it since", network, []*store.Plan{plan("network", head, true, true)}, false, lastBy(8, oldHead),
			want{groupMovedOn, "#8 applied the layer at 0000000 since"}, requirementFacts{}, policyFacts{}},
		{"applied at an older head of its own", network, []*store.Plan{plan("network", head, true, true)}, false, lastBy(7, oldHead),
			want{groupMovedOn, "#7 applied the layer at 0000000 since"}, requirementFacts{}, policyFacts{}},
		{"planned, not applied", network, []*store.Plan{plan("network", head, true, false)}, false, lastBy(8, oldHead),
			want{groupUnapplied, "planned at 1111111 and not applied; comment `/apply network` before it merges"}, requirementFacts{}, policyFacts{}},
		{"not planned at its head", network, []*store.Plan{plan("network", oldHead, true, true)}, false, lastBy(7, oldHead),
			want{groupUnplanned, "no plan of its head 1111111; comment `/plan network` then `/apply network`"}, requirementFacts{}, policyFacts{}},
		{"no changes", network, []*store.Plan{plan("network", head, false, false)}, false, store.LayerApplied{},
			want{groupNoChanges, "changes nothing"}, requirementFacts{}, policyFacts{}},
		{"applies on merge: compared", onMerge, []*store.Plan{plan("network", head, true, false)}, true, store.LayerApplied{},
			want{groupCompare, "applies on merge"}, requirementFacts{}, policyFacts{}},
		{"applies on merge, not planned", onMerge, nil, true, store.LayerApplied{},
			want{groupUnplanned, "no plan of its head 1111111; comment `/plan network`"}, requirementFacts{}, policyFacts{}},
		{"applies on merge, reviewed changes lost", onMerge, []*store.Plan{plan("network", head, true, false)}, false, store.LayerApplied{},
			want{groupDiffers, "were not kept"}, requirementFacts{}, policyFacts{}},
		{"applies on merge, already applied with /apply", onMerge, []*store.Plan{plan("network", head, true, true)}, true, lastBy(7, head),
			want{groupApplied, "applied at"}, requirementFacts{}, policyFacts{}},
		{"applies on merge, requires an approval it lacks", strictOnMerge, []*store.Plan{plan("network", head, true, false)}, true, store.LayerApplied{},
			want{groupRefused, "the merge would not apply it: it requires an approving review"}, requirementFacts{Author: "alice", Head: head}, policyFacts{}},
		{"applies on merge, approved", strictOnMerge, []*store.Plan{plan("network", head, true, false)}, true, store.LayerApplied{},
			want{groupCompare, "applies on merge"}, approvedByBob, policyFacts{}},
		{"applies on merge, mergeable means nothing after a merge", mergeableOnMerge, []*store.Plan{plan("network", head, true, false)}, true, store.LayerApplied{},
			want{groupCompare, "applies on merge"}, requirementFacts{Conflicts: true}, policyFacts{}},
		{"applies on merge, blocked by policy", onMerge, []*store.Plan{plan("network", head, true, false)}, true, store.LayerApplied{},
			want{groupRefused, "the merge would not apply it: `network`: blocked by policy: `/approve-policies network` from an owner of each set that denies the plan: set `guard` by @carol or @acme/security"},
			requirementFacts{}, judged(guardDenies)},
		{"applies on merge, an owner approved the denial", onMerge, []*store.Plan{plan("network", head, true, false)}, true, store.LayerApplied{},
			want{groupCompare, "applies on merge"}, requirementFacts{}, judged(guardDenies, "guard")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := decideMergeGroup(groupFacts{
				PRs: []groupPR{{Number: 7, Head: head, Layers: []config.Layer{tc.layer}, Plans: tc.plans, Reviewed: map[string]bool{"network": tc.reviewed},
					Requirements: tc.reqs, Policy: map[string]policyFacts{"network": tc.policy}}},
				LastApply: map[string]store.LayerApplied{"network": tc.last},
			})
			if len(got) != 1 || got[0].PR != 7 || got[0].State != tc.want.state || !strings.Contains(got[0].Why, tc.want.why) {
				t.Fatalf("got %+v, want %s %q", got, tc.want.state, tc.want.why)
			}
		})
	}
}

func TestReviewedUnion(t *testing.T) {
	a := terraform.PlannedChange{Address: "world_thing.a", Actions: []string{"create"}}
	b := terraform.PlannedChange{Address: "world_thing.b", Actions: []string{"update"}}
	got, conflict := reviewedUnion(map[int][]terraform.PlannedChange{1: {a}, 2: {b}}, []int{1, 2})
	if conflict != "" || !reflect.DeepEqual(got, []terraform.PlannedChange{a, b}) {
		t.Fatalf("disjoint: %v %q", got, conflict)
	}
	_, conflict = reviewedUnion(map[int][]terraform.PlannedChange{1: {a}, 2: {a, b}}, []int{1, 2})
	if conflict != "#1 and #2 both change `world_thing.a`: queue them in separate groups (one after the other merged)" {
		t.Fatalf("overlap: %q", conflict)
	}
}

func TestGroupCheck(t *testing.T) {
	net, dnsL := network, dns
	ok := groupItem{PR: 1, Layer: net, State: groupApplied, Why: "applied at 1111111"}
	bad := groupItem{PR: 2, Layer: dnsL, State: groupUnapplied, Why: "planned at 2222222 and not applied"}
	for _, tc := range []struct {
		name                       string
		members                    []int
		items                      []groupItem
		unknown                    []string
		tooMany                    bool
		conclusion, title, summary string
	}{
		{"all applied", []int{1}, []groupItem{ok}, nil, false, "success", "Every layer of the group is applied",
			"The group holds #1.\n\n- ✅ #1 `network`: applied at 1111111"},
		{"one unapplied", []int{1, 2}, []groupItem{ok, bad}, nil, false, "failure", "1 layer not ready to merge",
			"The group holds #1, #2. Not ready:\n\n- ❌ #2 `dns`: planned at 2222222 and not applied\n\nReady:\n\n- ✅ #1 `network`: applied at 1111111"},
		{"no layers", []int{3}, nil, nil, false, "success", "No layer changes", "The group holds #3. They change no layer."},
		{"a commit nobody claims", []int{1}, []groupItem{ok}, []string{head}, false, "failure", "Cannot tell which pull requests the group holds",
			"The group holds #1. Not ready:\n\n- ❌ commit 1111111: Strata found no open pull request of the queue's base it comes from, so it cannot tell whether its layers were applied\n\nReady:\n\n- ✅ #1 `network`: applied at 1111111"},
		{"too many commits", nil, nil, nil, true, "failure", "Cannot tell which pull requests the group holds",
			"Strata found no pull request in the group. Not ready:\n\n- ❌ the group adds more commits than GitHub's compare lists, so Strata cannot tell which pull requests it holds"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := groupCheck("abc", tc.members, tc.items, tc.unknown, tc.tooMany)
			if c.Name != "strata/applied" || c.HeadSHA != "abc" || c.Conclusion != tc.conclusion || c.Title != tc.title || c.Summary != tc.summary {
				t.Fatalf("check %q %q %q %q, want %q %q %q", c.Name, c.Conclusion, c.Title, c.Summary, tc.conclusion, tc.title, tc.summary)
			}
		})
	}
}
