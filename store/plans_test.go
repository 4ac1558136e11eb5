package store_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"testing"

	"strata.dev/strata/seal"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

func TestPlans(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			p := store.Plan{Repo: "acme/infra", PR: 3, Layer: "net", HeadSHA: "h1", PlanFile: []byte{0, 1, 2, 255}, Summary: "1 to add", HasChanges: true}
			if err := st.SavePlan(ctx, p); err != nil {
				t.Fatal(err)
			}
			got, err := st.PlanAt(ctx, "acme/infra", 3, "net", "h1")
			if err != nil || !bytes.Equal(got.PlanFile, p.PlanFile) || !got.HasChanges || !got.AppliedAt.IsZero() {
				t.Fatalf("PlanAt = %+v, %v", got, err)
			}
			if ok, _ := st.MarkApplied(ctx, "acme/infra", 3, "net", "h1"); !ok {
				t.Fatal("first MarkApplied refused")
			}
			if ok, _ := st.MarkApplied(ctx, "acme/infra", 3, "net", "h1"); ok {
				t.Fatal("a plan was applied twice")
			}
			if err := st.DeletePlansOfPR(ctx, "acme/infra", 3); err != nil {
				t.Fatal(err)
			}
			if plans, _ := st.PlansOfPR(ctx, "acme/infra", 3); len(plans) != 0 {
				t.Fatalf("plans left: %d", len(plans))
			}
		})
	}
}

func TestPlanBatch(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			b := store.PlanBatch{ID: "job-1", Repo: "r", PR: 1, Total: 2}
			if ok, _ := st.CreateBatch(ctx, b); !ok {
				t.Fatal("batch not created")
			}
			if ok, _ := st.CreateBatch(ctx, b); ok {
				t.Fatal("batch created twice")
			}
			if items, _ := st.FinishBatchItem(ctx, "job-1", store.BatchItem{Layer: "b", Position: 1, Report: "B"}); items != nil {
				t.Fatal("batch complete after one of two")
			}
			items, err := st.FinishBatchItem(ctx, "job-1", store.BatchItem{Layer: "a", Position: 0, Report: "A"})
			if err != nil || len(items) != 2 || items[0].Report != "A" {
				t.Fatalf("items = %+v, %v", items, err)
			}
			if again, _ := st.FinishBatchItem(ctx, "job-1", store.BatchItem{Layer: "a", Position: 0, Report: "A"}); again != nil {
				t.Fatal("the comment was claimed twice")
			}
		})
	}
}

// storedPlan reads a plan's bytes as they are at rest, past the store.
func storedPlan(t *testing.T, st *store.Store, layer string) []byte {
	t.Helper()
	var b []byte
	if err := st.DB().QueryRow(st.Rebind(`SELECT plan FROM plans WHERE layer = ?`), layer).Scan(&b); err != nil {
		t.Fatal(err)
	}
	return b
}

func key(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, seal.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// Someone with a copy of the database reads the plans table: the plan
// files are sealed, not Terraform's zip with its sensitive values.
func TestPlanFilesAreEncryptedAtRest(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			planFile := []byte("PK\x03\x04tfplan... password = hunter2-very-secret")
			if err := st.SavePlan(ctx, store.Plan{Repo: "acme/infra", PR: 3, Layer: "net", HeadSHA: "h1", PlanFile: planFile}); err != nil {
				t.Fatal(err)
			}
			raw := storedPlan(t, st, "net")
			if bytes.HasPrefix(raw, []byte("PK")) || bytes.Contains(raw, []byte("hunter2")) || !seal.IsSealed(raw) {
				t.Fatalf("plan at rest = %q, want it sealed", raw)
			}
			got, err := st.PlanAt(ctx, "acme/infra", 3, "net", "h1")
			if err != nil || !bytes.Equal(got.PlanFile, planFile) {
				t.Fatalf("PlanAt = %+v, %v", got, err)
			}

			// The sealed bytes copied onto another layer's row do not open.
			if err := st.SavePlan(ctx, store.Plan{Repo: "acme/infra", PR: 3, Layer: "dns", HeadSHA: "h1", PlanFile: []byte("x")}); err != nil {
				t.Fatal(err)
			}
			if _, err := st.DB().Exec(st.Rebind(`UPDATE plans SET plan = ? WHERE layer = ?`), raw, "dns"); err != nil {
				t.Fatal(err)
			}
			if _, err := st.PlanAt(ctx, "acme/infra", 3, "dns", "h1"); err == nil || !strings.Contains(err.Error(), "run /plan again") {
				t.Fatalf("a plan moved to another layer opened: %v", err)
			}
		})
	}
}

// A plan stored in clear before encryption (or written into the database by
// someone else) is never applied: it reads as unsealed. The migration that
// introduced encryption empties the plaintext plans already stored.
func TestPlaintextPlansAreNotTrusted(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			if err := st.SavePlan(ctx, store.Plan{Repo: "acme/infra", PR: 3, Layer: "net", HeadSHA: "h1", PlanFile: []byte("x"), HasChanges: true}); err != nil {
				t.Fatal(err)
			}
			clear := []byte("PK\x03\x04 hunter2-very-secret")
			if _, err := st.DB().Exec(st.Rebind(`UPDATE plans SET plan = ?`), clear); err != nil {
				t.Fatal(err)
			}
			if _, err := st.PlanAt(ctx, "acme/infra", 3, "net", "h1"); !errors.Is(err, store.ErrPlanUnsealed) {
				t.Fatalf("PlanAt of a plaintext plan = %v, want ErrPlanUnsealed", err)
			}

			// As on a server upgraded with plaintext plans in its database.
			if _, err := st.DB().Exec(`DELETE FROM strata_migrations WHERE name = '007_plans_sealed.sql'`); err != nil {
				t.Fatal(err)
			}
			if err := st.Migrate(ctx); err != nil {
				t.Fatal(err)
			}
			if raw := storedPlan(t, st, "net"); len(raw) != 0 {
				t.Fatalf("plaintext plan left at rest after the migration: %q", raw)
			}
			if plans, _ := st.PlansOfPR(ctx, "acme/infra", 3); len(plans) != 1 || !plans[0].HasChanges {
				t.Fatalf("the migration lost the plan's record: %+v", plans)
			}
		})
	}
}

// Rotation: plans sealed with the old key open once the new key is current
// and the old one listed; without the old key, the error names the key and
// what to do.
func TestPlanKeyRotation(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			oldKey, newKey := key(t), key(t)
			use := func(current []byte, old ...[]byte) {
				k, err := seal.New(current, old...)
				if err != nil {
					t.Fatal(err)
				}
				st.UseKeys(k)
			}
			use(oldKey)
			if err := st.SavePlan(ctx, store.Plan{Repo: "r", PR: 1, Layer: "old", HeadSHA: "h", PlanFile: []byte("old plan")}); err != nil {
				t.Fatal(err)
			}
			use(newKey, oldKey)
			if p, err := st.PlanAt(ctx, "r", 1, "old", "h"); err != nil || string(p.PlanFile) != "old plan" {
				t.Fatalf("old plan after rotation = %+v, %v", p, err)
			}
			if err := st.SavePlan(ctx, store.Plan{Repo: "r", PR: 1, Layer: "new", HeadSHA: "h", PlanFile: []byte("new plan")}); err != nil {
				t.Fatal(err)
			}
			if raw := storedPlan(t, st, "new"); !bytes.Contains(raw, []byte(seal.KeyID(newKey))) {
				t.Errorf("a plan saved after rotation is not sealed with the new key: %q", raw[:30])
			}
			use(newKey)
			_, err := st.PlanAt(ctx, "r", 1, "old", "h")
			if err == nil || !strings.Contains(err.Error(), seal.KeyID(oldKey)) || !strings.Contains(err.Error(), seal.OldKeysEnv) {
				t.Fatalf("old plan without the old key: %v", err)
			}
			if p, err := st.PlanAt(ctx, "r", 1, "new", "h"); err != nil || string(p.PlanFile) != "new plan" {
				t.Fatalf("new plan = %+v, %v", p, err)
			}
		})
	}
}
