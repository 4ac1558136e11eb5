package e2e

import (
	"strings"
	"sync/atomic"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform/testprovider/providertest"
)

// A plan held mid-run (its provider waits on a gate) -> the run's log
// already holds Terraform's first lines, and never the layer's sensitive
// value; once the gate opens, the plan completes and the log holds it all,
// each line once.
func TestRunLogGrowsWhileThePlanRuns(t *testing.T) {
	e := startProviderLayers(t, apptest.Options{}, map[string][]providertest.Thing{network: nil})
	e.Repo.SetPermission("alice", "write")
	main := e.layer(network, providertest.Thing{Name: "a", Value: "one"}) + providertest.Gate("held")
	pr := e.openPR("held", "alice", map[string]string{network + "/main.tf": main, network + "/leak.tf": leakyLayer})
	head := pr.HeadSHA()
	st := e.Server.Store()
	planLog := func() string {
		logs := runLogs(t, st, "layer_plan", "acme/infra")
		if len(logs) == 0 {
			return ""
		}
		return logs[len(logs)-1]
	}

	e.comment(pr.Number, "alice", "/plan")
	var leaked atomic.Value
	e.WaitFor(layersWait, func() bool {
		log := planLog()
		if strings.Contains(log, leakTail) {
			leaked.Store(log)
		}
		return strings.Contains(log, "data.world_gate.held: Reading...")
	})
	if cr, _ := e.Repo.CheckRun(head, networkPlan); cr.Status == "completed" {
		t.Fatalf("the plan completed with its gate shut: %+v", cr)
	}
	held := planLog()
	for _, want := range []string{"$ terraform plan\n", "Initializing", "data.world_gate.held: Reading..."} {
		if !strings.Contains(held, want) {
			t.Errorf("while the plan is held, its log lacks %q:\n%s", want, held)
		}
	}
	if strings.Contains(held, "Plan: ") {
		t.Errorf("the log of a held plan shows its end:\n%s", held)
	}

	e.world.OpenGate(t, "held")
	e.WaitFor(layersWait, func() bool {
		if log := planLog(); strings.Contains(log, leakTail) {
			leaked.Store(log)
		}
		cr, ok := e.Repo.CheckRun(head, networkPlan)
		return ok && cr.Status == "completed"
	})
	if plan, _ := e.Repo.CheckRun(head, networkPlan); plan.Conclusion != "success" || plan.Title != "1 to add, 0 to change, 0 to destroy" {
		t.Fatalf("plan = %s %q %q", plan.Conclusion, plan.Title, plan.Text)
	}
	e.WaitIdle(layersWait)
	if log, ok := leaked.Load().(string); ok {
		t.Errorf("the sensitive value was stored while the plan ran:\n%s", log)
	}
	full := planLog()
	if !strings.HasPrefix(full, held) {
		t.Errorf("the full log does not go on from what was stored while the plan was held:\nheld:\n%s\nfull:\n%s", held, full)
	}
	for _, once := range []string{"$ terraform plan\n", "data.world_gate.held: Reading...", "Plan: 1 to add", "[strata] terraform plan took"} {
		if n := strings.Count(full, once); n != 1 {
			t.Errorf("the log holds %q %d times, want once:\n%s", once, n, full)
		}
	}
	noLeak(t, e.layersEnv, head, pr.Number)
	noViolations(t, e.GitHub)
}
