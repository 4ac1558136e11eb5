package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
)

// The default branch's policy: layer network requires its code owners, who
// are the team acme/network for the layer's dir.
const (
	codeownersYAML = `version: 1
layers:
  - name: network
    dir: infra/network
    apply_requirements: [codeowners]
`
	mainCodeowners = `# The platform team owns everything not named below.
*                   @acme/platform
/infra/network/     @acme/network
`
	// The PR's own CODEOWNERS: it makes its author and a friend the
	// layer's owners. Strata reads the default branch's only.
	prCodeowners = `*                   @acme/platform
/infra/network/     @alice @mallory
`
)

// PR #1 by alice changes layer network, whose files acme/network owns on
// main, and edits CODEOWNERS to make herself and mallory the owners ->
// /apply is refused naming the file and @acme/network despite alice's and
// mallory's approvals (the PR's CODEOWNERS does not count); bob of
// acme/network approves, then alice pushes -> bob's approval of the older
// commit no longer counts; carol of acme/network approves the new head ->
// the apply runs. The plan comment says whose approval is missing, and
// /help explains the requirement.
func TestLayersCodeowners(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1},
		map[string]string{".strata.yaml": codeownersYAML, ".github/CODEOWNERS": mainCodeowners})
	e.GitHub.SetTeam("acme", "network", "bob", "carol")
	e.GitHub.SetTeam("acme", "platform", "dave")
	for _, u := range []string{"alice", "mallory", "bob", "carol"} {
		e.Repo.SetPermission(u, "write")
	}
	const check = "strata/apply: network"
	pr := e.openPR("grow", "alice", map[string]string{
		network + "/main.tf": e.layerFile(network, 2),
		".github/CODEOWNERS": prCodeowners,
	})
	head := pr.HeadSHA()
	e.comment(pr.Number, "alice", "/plan network")
	if cr := e.completed(head, "strata/plan: network"); cr.Conclusion != "success" {
		t.Fatalf("plan = %s %q", cr.Conclusion, cr.Summary)
	}
	e.commentWith(pr.Number, "Next: code owners must approve first, as `/apply network` would be refused now")
	e.commentWith(pr.Number, "still needed: `infra/network/main.tf` by `@acme/network`")

	// The PR's CODEOWNERS names alice and mallory: neither approval counts.
	e.Repo.AddReview(pr.Number, "alice", "APPROVED")
	e.Repo.AddReview(pr.Number, "mallory", "APPROVED")
	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 1, head, check, "(`.github/CODEOWNERS` on `main`); still needed: `infra/network/main.tf` by `@acme/network` (the author's own approval does not count)")

	// bob of acme/network approves; a push then voids his approval.
	e.Repo.AddReview(pr.Number, "bob", "APPROVED")
	old := head
	head = pr.Push(map[string]string{network + "/main.tf": e.layerFile(network, 3)}, "One more")
	e.Deliver(e.Repo.PullRequestEvent("synchronize", pr.Number))
	if cr := e.completed(head, "strata/plan: network"); cr.Conclusion != "success" {
		t.Fatalf("plan of the new head = %s %q", cr.Conclusion, cr.Summary)
	}
	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 2, head, check, "still needed: `infra/network/main.tf` by `@acme/network` ("+
		"the author's own approval does not count; @mallory approved "+old[:7]+", not the head "+head[:7]+
		"; @bob approved "+old[:7]+", not the head "+head[:7]+")")

	// carol of acme/network approves the head: the apply runs.
	e.Repo.AddReview(pr.Number, "carol", "APPROVED")
	e.comment(pr.Number, "alice", "/apply network")
	// The second refusal's check is on this head too: wait for the apply's.
	e.WaitFor(layersWait, func() bool { return len(e.checksNamed(head, check)) >= 2 })
	if cr := e.completed(head, check); cr.Conclusion != "success" {
		t.Fatalf("apply after a code owner's approval = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}

	e.comment(pr.Number, "alice", "/help")
	e.commentWith(pr.Number, "- `codeowners`: each file of the layer the pull request changes")
	e.commentWith(pr.Number, "`network`: codeowners")

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
