package layers

import (
	"slices"
	"testing"

	"strata.dev/strata/config"
	"strata.dev/strata/pull"
)

// Only layers with the codeowners requirement have CODEOWNERS read.
func TestRequiringCodeowners(t *testing.T) {
	layers := []config.Layer{
		{Name: "infra/network", ApplyRequirements: []config.ApplyRequirement{config.Approved, config.CodeOwners}},
		{Name: "infra/dns", ApplyRequirements: []config.ApplyRequirement{config.Approved}},
		{Name: "infra/app"},
		{Name: "infra/db", ApplyRequirements: []config.ApplyRequirement{config.CodeOwners}},
	}
	var got []string
	for _, l := range requiringCodeowners(layers) {
		got = append(got, l.Name)
	}
	if want := []string{"infra/network", "infra/db"}; !slices.Equal(got, want) {
		t.Errorf("requiringCodeowners = %v, want %v", got, want)
	}
	if got := requiringCodeowners(layers[1:3]); got != nil {
		t.Errorf("without the requirement: %v, want none", got)
	}
}

// Team members are asked of GitHub only once some approval could count for
// code owners: the author's own, a read-only reviewer's or one of an older
// head asks for none.
func TestTeamsToAsk(t *testing.T) {
	rules := rulesOf(t, ownersFile)
	files := []string{"infra/network/main.tf", "modules/vpc/main.tf", "README.md"}
	approve := func(who, sha string) []pull.Review {
		return []pull.Review{{Author: who, State: "APPROVED", CommitID: sha}}
	}
	perms := map[string]pull.Permission{"bob": pull.Write, "carol": pull.Read, "alice": pull.Admin}
	for _, tc := range []struct {
		name string
		f    requirementFacts
		want []string
	}{
		{"no reviews", requirementFacts{Author: "alice", Head: "h2", Reviewers: perms}, nil},
		{"the author's own approval", requirementFacts{Author: "alice", Head: "h2", Reviews: approve("alice", "h2"), Reviewers: perms}, nil},
		{"a read-only reviewer", requirementFacts{Author: "alice", Head: "h2", Reviews: approve("carol", "h2"), Reviewers: perms}, nil},
		{"an approval of an older head", requirementFacts{Author: "alice", Head: "h2", Reviews: approve("bob", "h1"), Reviewers: perms}, nil},
		{"a writer's approval of the head", requirementFacts{Author: "alice", Head: "h2", Reviews: approve("bob", "h2"), Reviewers: perms},
			[]string{"acme/network", "acme/platform"}},
	} {
		if got := teamsToAsk(tc.f, files, rules); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
