package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
)

// PR #1 changes only modules/x, which infra/api calls directly and
// infra/web through modules/wrap -> both autoplanned with the module's new
// resource; infra/dns, which calls no module, is not.
func TestLayersAutoplanModuleChange(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{"infra/api": 1, "infra/web": 1, "infra/dns": 1}, map[string]string{
		"infra/api/modules.tf": `module "x" { source = "../../modules/x" }`,
		"infra/web/modules.tf": `module "wrap" { source = "../../modules/wrap" }`,
		"modules/wrap/main.tf": `module "x" { source = "../x" }`,
		"modules/x/main.tf":    `resource "terraform_data" "first" {}`,
	})
	pr := e.openPR("module", "alice", map[string]string{
		"modules/x/main.tf": `resource "terraform_data" "first" {}` + "\n" + `resource "terraform_data" "second" {}`,
	})
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))

	head := pr.HeadSHA()
	for layer, address := range map[string]string{
		"infra/api": "module.x.terraform_data.second",
		"infra/web": "module.wrap.module.x.terraform_data.second",
	} {
		plan := e.completed(head, "strata/plan: "+layer)
		if plan.Conclusion != "success" || !strings.Contains(plan.Text, address) {
			t.Errorf("%s plan = %s %q, text %q; want success with %s", layer, plan.Conclusion, plan.Title, plan.Text, address)
		}
	}
	e.WaitIdle(layersWait)
	if _, ok := e.Repo.CheckRun(head, "strata/plan: infra/dns"); ok {
		t.Error("infra/dns was planned though it calls no changed module")
	}
	noViolations(t, e.GitHub)
}
