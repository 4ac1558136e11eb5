package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// An approval is for one plan: a new plan of the layer (another head, or
// the same head planned again) drops it.
func TestPolicyApprovalsDieWithThePlan(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			if _, err := st.PolicyEvaluationOf(ctx, "acme/infra", 1, "net"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("no evaluation yet: %v", err)
			}
			t1 := time.UnixMilli(1_700_000_000_000).UTC()
			e := store.PolicyEvaluation{Repo: "acme/infra", PR: 1, Layer: "net", HeadSHA: "h1", PlanAt: t1, PolicySHA: "m1", Sets: `[{"name":"guard"}]`}
			if err := st.SavePolicyEvaluation(ctx, e); err != nil {
				t.Fatal(err)
			}
			a := store.PolicyApproval{Repo: "acme/infra", PR: 1, Layer: "net", HeadSHA: "h1", PlanAt: t1, Set: "guard", Approver: "alice"}
			if err := st.ApprovePolicy(ctx, a); err != nil {
				t.Fatal(err)
			}
			a.Approver = "bob" // approving again keeps the first
			if err := st.ApprovePolicy(ctx, a); err != nil {
				t.Fatal(err)
			}
			got, err := st.PolicyApprovals(ctx, "acme/infra", 1, "net", "h1", t1)
			if err != nil || len(got) != 1 || got[0].Approver != "alice" || got[0].Set != "guard" {
				t.Fatalf("approvals %+v, %v", got, err)
			}
			// The same evaluation saved again keeps them.
			if err := st.SavePolicyEvaluation(ctx, e); err != nil {
				t.Fatal(err)
			}
			if got, _ := st.PolicyApprovals(ctx, "acme/infra", 1, "net", "h1", t1); len(got) != 1 {
				t.Fatalf("approvals after saving the same plan's evaluation: %+v", got)
			}
			// A re-plan at the same head.
			t2 := t1.Add(time.Minute)
			e.PlanAt = t2
			if err := st.SavePolicyEvaluation(ctx, e); err != nil {
				t.Fatal(err)
			}
			if got, _ := st.PolicyApprovals(ctx, "acme/infra", 1, "net", "h1", t1); len(got) != 0 {
				t.Fatalf("approvals of the old plan survived a new plan: %+v", got)
			}
			last, err := st.LastPolicyEvaluation(ctx, "acme/infra", "net")
			if err != nil || !last.PlanAt.Equal(t2) || last.PolicySHA != "m1" || last.Sets != e.Sets {
				t.Fatalf("last evaluation %+v, %v", last, err)
			}
		})
	}
}
