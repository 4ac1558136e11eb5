package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform/testprovider/providertest"
)

// The plan check is completed from the plan's text, before `show -json`.
// A value the provider marks sensitive, printed through nonsensitive() in
// an output, is in that text and only the JSON says it is sensitive -> once
// the JSON is read, the check, the run's log, the comment and the stored
// report hold it masked; and the check showed the plan before the comment.
func TestLayersCheckMaskedOnceTheJSONSaysMore(t *testing.T) {
	e := startProviderLayers(t, apptest.Options{}, map[string][]providertest.Thing{network: nil})
	e.Repo.SetPermission("alice", "write")
	secret := "attr-secret-" + leakTail
	main := e.layer(network, providertest.Thing{Name: "s", Value: "visible", Secret: secret}) +
		"\noutput \"leak\" {\n  value = nonsensitive(world_thing.s.secret)\n}\n"
	pr := e.openPR("leak-attr", "alice", map[string]string{network + "/main.tf": main})
	head := pr.HeadSHA()

	e.comment(pr.Number, "alice", "/plan")
	plan := e.completed(head, networkPlan)
	if plan.Conclusion != "success" || plan.Title != "1 to add, 0 to change, 0 to destroy" || !strings.Contains(plan.Text, "leak") {
		t.Fatalf("plan = %s %q %q", plan.Conclusion, plan.Title, plan.Text)
	}
	e.commentWith(pr.Number, "Terraform plan")
	e.WaitIdle(layersWait)
	if cr := e.checksNamed(head, networkPlan)[0]; !strings.Contains(cr.Text, "leak") || strings.Contains(cr.Text, leakTail) {
		t.Fatalf("the check after the JSON: %q", cr.Text)
	}
	noLeak(t, e.layersEnv, head, pr.Number)
	noViolations(t, e.GitHub)
}
