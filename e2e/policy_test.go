package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
)

// The default branch's policies: guard (block, owned by carol and the team
// acme/security) denies every resource the plan creates, with its address;
// style (warn) warns about each one.
const (
	policyYAML = `version: 1
layers:
  - name: network
    dir: infra/network
policies:
  - {name: guard, path: policy/guard, owners: [carol, "@acme/security"], enforcement: block}
  - {name: style, path: policy/style.rego, enforcement: warn}
`
	guardRego = `package main

deny contains {"msg": sprintf("%s is created: creations need the platform team", [rc.address]), "address": rc.address} if {
	some rc in input.resource_changes
	"create" in rc.change.actions
}
`
	styleRego = `package main

warn[msg] {
	rc := input.resource_changes[_]
	msg := sprintf("%s has no tags", [rc.address])
}
`
	// The PR's own guard: allows everything.
	allowAllRego = "package main\n"
)

// policyIs waits for the latest strata/policy check of network on sha to
// have the conclusion, and returns it.
func (e *layersEnv) policyIs(sha, conclusion string) githubtest.CheckRun {
	e.t.Helper()
	return e.checkIs(sha, "strata/policy: network", conclusion)
}

// checkIs waits for the latest check called name on sha to have the
// conclusion (an earlier check of that name may have another).
func (e *layersEnv) checkIs(sha, name, conclusion string) githubtest.CheckRun {
	e.t.Helper()
	var cr githubtest.CheckRun
	e.GitHub.WaitFor(e.t, layersWait, func() bool {
		var ok bool
		cr, ok = e.Repo.CheckRun(sha, name)
		return ok && cr.Status == "completed" && cr.Conclusion == conclusion
	})
	return cr
}

// PR #1 by alice creates two resources and rewrites guard to allow
// everything -> still judged by main's guard: strata/policy fails listing
// each address and message, the plan comment notes that the PR's policy
// edits take effect after merge and says who may unblock; /apply is
// refused; alice (write, not an owner) approves -> refused, naming the
// owners; dave of acme/security (read only) approves -> the check passes
// and the apply runs... but first a push voids dave's approval of the old
// plan, and only his approval of the new one lets /apply through.
func TestPolicyBlocksUntilAnOwnerApproves(t *testing.T) {
	e := startLayers(t, apptest.Options{Local: true}, map[string]int{network: 0}, map[string]string{
		".strata.yaml": policyYAML, "policy/guard/guard.rego": guardRego, "policy/style.rego": styleRego,
	})
	e.GitHub.SetTeam("acme", "security", "dave")
	e.Repo.SetPermission("alice", "write")
	e.Repo.SetPermission("dave", "read")
	pr := e.openPR("grow", "alice", map[string]string{
		network + "/main.tf":      e.layerFile(network, 2),
		"policy/guard/guard.rego": allowAllRego,
	})
	head := pr.HeadSHA()
	e.comment(pr.Number, "alice", "/plan network")
	if cr := e.completed(head, "strata/plan: network"); cr.Conclusion != "success" {
		t.Fatalf("plan = %s %q", cr.Conclusion, cr.Summary)
	}
	cr := e.policyIs(head, "failure")
	for _, want := range []string{"`terraform_data.r0`", "`terraform_data.r1 is created: creations need the platform team`", "terraform_data.r1 has no tags"} {
		if !strings.Contains(cr.Text, want) {
			t.Errorf("policy check text lacks %q:\n%s", want, cr.Text)
		}
	}
	if !strings.Contains(cr.Summary, "@carol or @acme/security") || !strings.Contains(cr.Summary, "take effect after merge") {
		t.Errorf("policy check summary = %q", cr.Summary)
	}
	e.commentWith(pr.Number, "its edits take effect after merge")
	e.commentWith(pr.Number, "⛔ Blocked by policy: `/approve-policies network` from an owner of each set that denies the plan: set `guard` by @carol or @acme/security")

	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 1, head, "strata/apply: network", "blocked by policy")

	// A non-owner's approval is refused and changes nothing.
	e.comment(pr.Number, "alice", "/approve-policies network")
	e.commentWith(pr.Number, "@alice `/approve-policies` refused: only an owner of a set that denies the plan may approve it.")
	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 2, head, "strata/apply: network", "blocked by policy")

	// dave of acme/security approves; then alice pushes: a new plan.
	e.comment(pr.Number, "dave", "/approve-policies network")
	e.commentWith(pr.Number, "@dave approved the policy denials of `network` (`guard`)")
	if cr := e.policyIs(head, "success"); !strings.Contains(cr.Summary, "`guard` by @dave") {
		t.Errorf("approved policy check = %q %q", cr.Title, cr.Summary)
	}
	head = pr.Push(map[string]string{network + "/main.tf": e.layerFile(network, 3)}, "One more")
	e.Deliver(e.Repo.PullRequestEvent("synchronize", pr.Number))
	if cr := e.completed(head, "strata/plan: network"); cr.Conclusion != "success" {
		t.Fatalf("plan of the new head = %s %q", cr.Conclusion, cr.Summary)
	}
	e.policyIs(head, "failure")
	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 3, head, "strata/apply: network", "blocked by policy")

	e.comment(pr.Number, "dave", "/approve-policies")
	e.policyIs(head, "success")
	e.comment(pr.Number, "alice", "/apply network")
	e.checkIs(head, "strata/apply: network", "success")

	// The web UI's layer page shows the last judged plan and its approval.
	_, body := fetchPage(t, uiLogin(t, e.Env, "alice"), e.Config.PublicURL+"/repos/acme/infra/layers/network")
	for _, want := range []string{`id="policy"`, `<tr data-set="guard"><td>guard</td><td>block</td><td>3</td>`, "guard by @dave", "<code>" + head[:7] + "</code>"} {
		if !strings.Contains(body, want) {
			t.Errorf("layer page lacks %q:\n%s", want, body)
		}
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// A layer judged only by a warn set gets a neutral check and applies; a
// set whose Rego does not parse fails the check with its file and line.
func TestPolicyWarnAndRegoErrors(t *testing.T) {
	yaml := `version: 1
layers:
  - {name: network, dir: infra/network, policies: [style]}
  - {name: app, dir: infra/app, policies: [broken]}
policies:
  - {name: style, path: policy/style.rego, enforcement: warn}
  - {name: broken, path: policy/broken, owners: [carol]}
`
	e := startLayers(t, apptest.Options{}, map[string]int{network: 0, "infra/app": 0}, map[string]string{
		".strata.yaml": yaml, "policy/style.rego": styleRego, "policy/broken/a.rego": "package main\n\ndeny contains msg if {\n  msg := \n}\n",
	})
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 1), "infra/app/main.tf": e.layerFile("infra/app", 1)})
	head := pr.HeadSHA()
	e.comment(pr.Number, "alice", "/plan")
	if cr := e.policyIs(head, "neutral"); !strings.Contains(cr.Text, "terraform_data.r0 has no tags") {
		t.Errorf("warn check text = %q", cr.Text)
	}
	var app githubtest.CheckRun
	e.GitHub.WaitFor(t, layersWait, func() bool {
		var ok bool
		app, ok = e.Repo.CheckRun(head, "strata/policy: app")
		return ok && app.Status == "completed"
	})
	if app.Conclusion != "failure" || !strings.Contains(app.Text, "policy/broken/a.rego:5") {
		t.Errorf("broken set's check = %s %q", app.Conclusion, app.Text)
	}
	e.comment(pr.Number, "alice", "/apply network")
	if cr := e.completed(head, "strata/apply: network"); cr.Conclusion != "success" {
		t.Fatalf("apply of a layer with warnings only = %s %q", cr.Conclusion, cr.Summary)
	}
	noViolations(t, e.GitHub)
}
