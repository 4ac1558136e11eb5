package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/engine/terraform/testprovider/providertest"
	"strata.dev/strata/githubtest"
)

// The gates of /apply hold on merge too (docs/governance.md): a merge
// applies nothing that an /apply would have been refused.

// onMergePolicyYAML: infra/network applies on merge, judged by guard
// (guardRego: every creation is denied), owned by carol.
const onMergePolicyYAML = `version: 1
layers:
  - dir: infra/network
    auto_apply: on_merge
policies:
  - {name: guard, path: policy/guard, owners: [carol], enforcement: block}
`

// noButtons fails when a post-merge check offers a button: a merged PR's
// /plan is refused, so none could work.
func noButtons(t *testing.T, cr githubtest.CheckRun) {
	t.Helper()
	if len(cr.Actions) > 0 {
		t.Errorf("check %s on a merge commit offers %v", cr.Name, actionIDs(cr))
	}
}

// The attack: PR #1 creates a thing, main's guard denies it, nobody
// approves, and the PR merges (branch protection does not know Strata's
// policy) -> nothing is applied: strata/apply fails on the merge commit
// saying the policy blocked it and how to apply from a new PR, the PR is
// told, the lock is released. The control: PR #2's denial is approved by
// carol before it merges -> the merge applies it.
func TestGovernancePolicyGatesTheMerge(t *testing.T) {
	e := startOnMerge(t, onMergePolicyYAML)
	e.Repo.Commit("main", map[string]string{"policy/guard/guard.rego": guardRego}, "Guard creations")
	e.Repo.SetPermission("carol", "read")
	const policyCheck = "strata/policy: infra/network"

	denied := e.reviewed("grow", providertest.Thing{Name: "a", Value: "one"})
	e.checkIs(denied.HeadSHA(), policyCheck, "failure")
	merged := e.merge(denied)
	cr := e.completed(merged, networkApply)
	for _, want := range []string{"blocked by policy: the reviewed plan is denied by set `guard` (owners: @carol)",
		"no owner approved it with `/approve-policies infra/network` before the merge",
		"comment `/plan infra/network` on a new pull request"} {
		if cr.Conclusion != "failure" || !strings.Contains(cr.Summary, want) {
			t.Fatalf("apply check of a merge blocked by policy = %s %q, want it to say %q", cr.Conclusion, cr.Summary, want)
		}
	}
	noButtons(t, cr)
	e.commentWith(denied.Number, "❌ `infra/network`: blocked by policy")
	if names := e.world.Names(t); len(names) != 0 {
		t.Fatalf("a merge blocked by policy changed the world: %v", names)
	}
	e.WaitIdle(layersWait)
	if h := e.lockHolder(); h != 0 {
		t.Fatalf("nothing was applied, yet #%d keeps the lock", h)
	}

	approved := e.reviewed("grow-again", providertest.Thing{Name: "a", Value: "one"}, providertest.Thing{Name: "b", Value: "two"})
	e.checkIs(approved.HeadSHA(), policyCheck, "failure")
	e.comment(approved.Number, "carol", "/approve-policies")
	e.checkIs(approved.HeadSHA(), policyCheck, "success")
	merged = e.merge(approved)
	if cr := e.completed(merged, networkApply); cr.Conclusion != "success" || !strings.Contains(cr.Text, "Resources: 2 added") {
		t.Fatalf("apply after a merge an owner approved = %s %q %q", cr.Conclusion, cr.Summary, cr.Text)
	}
	for _, name := range []string{"a", "b"} {
		if _, ok := e.world.Get(t, name); !ok {
			t.Fatalf("thing %s missing after the approved merge", name)
		}
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// The control: PR #1's files are approved at its head by bob of
// acme/network, their code owner on main -> the merge applies it (the
// team's members read through the API). The attack: PR #2 also rewrites
// CODEOWNERS to make mallory the layer's owner, and mallory approves ->
// the merge applies nothing: the owners are those of the base it merged
// into (the PR's CODEOWNERS is on main by then), and the check and the
// comment name the file and @acme/network.
func TestGovernanceCodeownersAtMerge(t *testing.T) {
	e := startOnMerge(t, "version: 1\nlayers:\n  - dir: infra/network\n    auto_apply: on_merge\n    apply_requirements: [codeowners]\n")
	e.Repo.Commit("main", map[string]string{".github/CODEOWNERS": "*  @acme/platform\n/infra/network/  @acme/network\n"}, "Code owners")
	e.GitHub.SetTeam("acme", "network", "bob")
	e.Repo.SetPermission("bob", "write")
	e.Repo.SetPermission("mallory", "write")

	owned := e.reviewed("grow", providertest.Thing{Name: "a", Value: "one"})
	e.Repo.AddReview(owned.Number, "bob", "APPROVED")
	merged := e.merge(owned)
	if cr := e.completed(merged, networkApply); cr.Conclusion != "success" {
		t.Fatalf("apply after a merge its code owner approved = %s %q", cr.Conclusion, cr.Summary)
	}
	if _, ok := e.world.Get(t, "a"); !ok {
		t.Fatal("thing a missing after the merge its code owner approved")
	}
	e.WaitIdle(layersWait)

	hijack := e.reviewedFiles("hijack", map[string]string{
		network + "/main.tf": e.layer(network, providertest.Thing{Name: "a", Value: "one"}, providertest.Thing{Name: "b", Value: "two"}),
		".github/CODEOWNERS": "*  @acme/platform\n/infra/network/  @mallory\n",
	})
	e.Repo.AddReview(hijack.Number, "mallory", "APPROVED")
	merged = e.merge(hijack)
	cr := e.completed(merged, networkApply)
	for _, want := range []string{"(`.github/CODEOWNERS` on `main`); still needed: `infra/network/main.tf` by `@acme/network`",
		"nothing was applied", "comment `/plan infra/network` on a new pull request"} {
		if cr.Conclusion != "failure" || !strings.Contains(cr.Summary, want) {
			t.Fatalf("apply check of a merge its code owners did not approve = %s %q, want it to say %q", cr.Conclusion, cr.Summary, want)
		}
	}
	noButtons(t, cr)
	e.commentWith(hijack.Number, "❌ `infra/network`: it requires an approval of the head commit from a code owner")
	if _, ok := e.world.Get(t, "b"); ok {
		t.Fatal("thing b exists: a merge approved only by an owner the PR named was applied")
	}
	if v, ok := e.Repo.FileAt("main", ".github/CODEOWNERS"); !ok || !strings.Contains(v, "@mallory") {
		t.Fatalf("main's CODEOWNERS = %q: the merge did not bring the PR's", v)
	}
	teamReads := 0
	for _, r := range e.GitHub.Requests() {
		if r.Method == "GET" && strings.HasSuffix(r.Path, "/orgs/acme/teams/network/members") {
			teamReads++
		}
	}
	if teamReads == 0 {
		t.Error("the team's members were never read")
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}
