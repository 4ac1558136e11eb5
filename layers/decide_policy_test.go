package layers

import (
	"strings"
	"testing"
	"time"

	"strata.dev/strata/config"
	"strata.dev/strata/store"
)

func TestPolicyGate(t *testing.T) {
	t1 := time.UnixMilli(1_700_000_000_000).UTC()
	t2 := t1.Add(time.Minute)
	plan := &store.Plan{Layer: "net", HeadSHA: "h2", CreatedAt: t2}
	evaluated := &store.PolicyEvaluation{HeadSHA: "h2", PlanAt: t2}
	guard := setOutcome{Name: "guard", Enforcement: config.Block, Owners: []string{"alice", "@acme/platform"}, DenialCount: 2}
	sec := setOutcome{Name: "sec", Enforcement: config.Block, Owners: []string{"bob"}, DenialCount: 1}
	broken := setOutcome{Name: "broken", Enforcement: config.Block, Owners: []string{"carol"}, Error: "policy/a.rego:3: rego_parse_error"}
	style := setOutcome{Name: "style", Enforcement: config.Warn, DenialCount: 3}
	passing := setOutcome{Name: "ok", Enforcement: config.Block, Owners: []string{"alice"}}
	warnOnly := setOutcome{Name: "ok", Enforcement: config.Block, Owners: []string{"alice"}, WarningCount: 1}
	approval := func(set, head string, at time.Time) store.PolicyApproval {
		return store.PolicyApproval{Set: set, HeadSHA: head, PlanAt: at, Approver: "alice"}
	}
	tests := []struct {
		name       string
		f          policyFacts
		want       policyState
		unapproved []string
		refusal    string
	}{
		{"no set judges the layer", policyFacts{Plan: plan}, policyNone, nil, ""},
		{"not judged yet", policyFacts{Judged: true, Plan: plan}, policyPending, nil, "have not judged this plan yet"},
		{"judged an older plan at the same head", policyFacts{Judged: true, Plan: plan, Evaluation: &store.PolicyEvaluation{HeadSHA: "h2", PlanAt: t1}, Sets: []setOutcome{passing}}, policyPending, nil, "have not judged"},
		{"judged another head", policyFacts{Judged: true, Plan: plan, Evaluation: &store.PolicyEvaluation{HeadSHA: "h1", PlanAt: t2}, Sets: []setOutcome{passing}}, policyPending, nil, "have not judged"},
		{"passes", policyFacts{Judged: true, Plan: plan, Evaluation: evaluated, Sets: []setOutcome{passing}}, policyPassed, nil, ""},
		{"warnings only", policyFacts{Judged: true, Plan: plan, Evaluation: evaluated, Sets: []setOutcome{warnOnly}}, policyWarned, nil, ""},
		{"a warn set denies: neutral, not blocked", policyFacts{Judged: true, Plan: plan, Evaluation: evaluated, Sets: []setOutcome{passing, style}}, policyWarned, nil, ""},
		{"a block set denies", policyFacts{Judged: true, Plan: plan, Evaluation: evaluated, Sets: []setOutcome{guard, style}}, policyBlocked, []string{"guard"},
			"`net`: blocked by policy: `/approve-policies net` from an owner of each set that denies the plan: set `guard` by @alice or @acme/platform"},
		{"a set that does not compile blocks", policyFacts{Judged: true, Plan: plan, Evaluation: evaluated, Sets: []setOutcome{broken}}, policyBlocked, []string{"broken"}, "set `broken` by @carol"},
		{"approved", policyFacts{Judged: true, Plan: plan, Evaluation: evaluated, Sets: []setOutcome{guard}, Approvals: []store.PolicyApproval{approval("guard", "h2", t2)}}, policyApproved, nil, ""},
		{"one of two failing sets approved", policyFacts{Judged: true, Plan: plan, Evaluation: evaluated, Sets: []setOutcome{guard, sec}, Approvals: []store.PolicyApproval{approval("guard", "h2", t2)}}, policyBlocked, []string{"sec"}, "set `sec` by @bob"},
		{"an approval of another plan does not count", policyFacts{Judged: true, Plan: plan, Evaluation: evaluated, Sets: []setOutcome{guard}, Approvals: []store.PolicyApproval{approval("guard", "h2", t1)}}, policyBlocked, []string{"guard"}, "guard"},
		{"an approval of another head does not count", policyFacts{Judged: true, Plan: plan, Evaluation: evaluated, Sets: []setOutcome{guard}, Approvals: []store.PolicyApproval{approval("guard", "h1", t2)}}, policyBlocked, []string{"guard"}, "guard"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := policyGate(tt.f)
			if v.State != tt.want {
				t.Fatalf("state %d, want %d", v.State, tt.want)
			}
			var names []string
			for _, s := range v.Unapproved {
				names = append(names, s.Name)
			}
			if strings.Join(names, ",") != strings.Join(tt.unapproved, ",") {
				t.Fatalf("unapproved %q, want %q", names, tt.unapproved)
			}
			got := v.refusal("net")
			if (tt.refusal == "") != (got == "") || !strings.Contains(got, tt.refusal) {
				t.Fatalf("refusal %q, want %q", got, tt.refusal)
			}
		})
	}
}

// decideApply refuses a layer the policy gate blocks, after its apply
// requirements.
func TestDecideApplyAsksThePolicyGate(t *testing.T) {
	l := config.Layer{Name: "net", Dir: "net", Workspace: "default"}
	plan := &store.Plan{Layer: "net", HeadSHA: "h", CreatedAt: time.UnixMilli(1).UTC()}
	blocked := policyFacts{Judged: true, Plan: plan, Evaluation: &store.PolicyEvaluation{HeadSHA: "h", PlanAt: plan.CreatedAt},
		Sets: []setOutcome{{Name: "guard", Enforcement: config.Block, Owners: []string{"alice"}, DenialCount: 1}}}
	f := applyFacts{PR: 1, Head: "h", Layers: []config.Layer{l}, All: []config.Layer{l}, Plans: []*store.Plan{plan},
		Locks: map[string]int{"net": 1}, Policy: map[string]policyFacts{"net": blocked}}
	dec := decideApply(f)
	if len(dec.Refuse) != 1 || !strings.Contains(dec.Reason, "blocked by policy") {
		t.Fatalf("decision %+v, want net refused by policy", dec)
	}
	blocked.Approvals = []store.PolicyApproval{{Set: "guard", HeadSHA: "h", PlanAt: plan.CreatedAt, Approver: "alice"}}
	f.Policy["net"] = blocked
	if dec := decideApply(f); len(dec.Run) != 1 {
		t.Fatalf("decision %+v once approved, want net applied", dec)
	}
}
