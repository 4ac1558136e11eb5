package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// stateLayer is a layer with no backend block: Strata keeps its state.
// note changes the file without changing what it manages.
func stateLayer(note string, names ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n", note)
	for _, n := range names {
		fmt.Fprintf(&b, "resource \"terraform_data\" %q {\n  input = %q\n}\n", n, n)
	}
	return b.String()
}

// Managed state end to end, on Terraform and OpenTofu, on PostgreSQL:
// PR #1 applies a new layer that declares no backend; after a restart, a
// replica that never ran the layer (its own data dir) plans PR #2, which
// changes nothing, and gets "No changes" (the state came from the store);
// with a second replica beside it, PR #3 removes a resource and its apply
// destroys exactly that one. The store holds the applies' versions, with
// their runs, PRs and commits, and no state lock is left.
func TestManagedState(t *testing.T) {
	for _, kind := range []string{config.EngineTerraform, config.EngineTofu} {
		t.Run(kind, func(t *testing.T) { managedStateScenario(t, kind) })
	}
}

func managedStateScenario(t *testing.T, kind string) {
	requireTerraform(t)
	tofu := tofuBin(t)
	tf, err := filepath.Abs(apptest.TerraformBin(t))
	if err != nil {
		t.Fatal(err)
	}
	const layer = "infra/state"
	const plan, apply = "strata/plan: " + layer, "strata/apply: " + layer
	// Every replica has the same encryption key (STRATA_ENCRYPTION_KEY),
	// as docs/deploy says: the state is sealed with it.
	key32 := make([]byte, 32)
	rand.Read(key32)
	configure := func(c *config.Server) {
		c.EncryptionKey = base64.StdEncoding.EncodeToString(key32)
		c.TerraformBin = tf
		c.Terraform.Binaries = append(c.Terraform.Binaries, config.Binary{Path: tofu, Kind: config.EngineTofu})
	}
	db := storetest.URL(t, store.Postgres)
	first := startLayers(t, apptest.Options{DatabaseURL: db, Configure: configure}, nil, map[string]string{
		".strata.yaml":     "version: 1\nengine: " + kind + "\nlayers:\n  - dir: " + layer + "\n",
		layer + "/main.tf": stateLayer("main", "a", "b", "c"),
	})
	first.Repo.SetPermission("alice", "write")
	key := store.StateKey{Repo: first.Repo.FullName(), Layer: layer}
	ctx := context.Background()

	// PR #1 applies the new layer: its state is Strata's.
	pr1 := first.openPR("one", "alice", map[string]string{layer + "/main.tf": stateLayer("PR 1", "a", "b", "c")})
	first.comment(pr1.Number, "alice", "/plan")
	if cr := first.completed(pr1.HeadSHA(), plan); cr.Conclusion != "success" || cr.Title != "3 to add, 0 to change, 0 to destroy" {
		t.Fatalf("PR 1 plan = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	first.comment(pr1.Number, "alice", "/apply")
	if cr := first.completed(pr1.HeadSHA(), apply); cr.Conclusion != "success" || !strings.Contains(cr.Text, "Resources: 3 added, 0 changed, 0 destroyed") {
		t.Fatalf("PR 1 apply = %s %q %q", cr.Conclusion, cr.Summary, cr.Text)
	}
	first.WaitIdle(layersWait)
	st := first.Server.Store()
	afterOne, err := st.StateVersions(ctx, key, 0)
	if err != nil || len(afterOne) == 0 {
		t.Fatalf("no state version after PR 1's apply: %v", err)
	}
	if v := afterOne[0]; v.PR != pr1.Number || v.Commit != pr1.HeadSHA() || v.Kind != store.StateByRun || v.RunID == 0 {
		t.Fatalf("PR 1's version = %+v; want its run, PR and head", v)
	}
	logs := strings.Join(runLogs(t, st, "layer_apply", key.Repo), "\n")
	if !strings.Contains(logs, "[strata] state: kept by Strata") {
		t.Errorf("the apply's log does not say the state is Strata's:\n%s", logs)
	}
	first.Repo.ClosePR(pr1.Number, true)
	first.Deliver(first.Repo.PullRequestEvent("closed", pr1.Number))
	first.WaitIdle(layersWait)
	first.Stop()

	// A restart onto another replica's disk: PR #2 changes nothing.
	second := first.another(t, apptest.Options{GitHub: first.GitHub, DatabaseURL: db, Configure: configure})
	pr2 := second.openPR("two", "alice", map[string]string{layer + "/main.tf": stateLayer("PR 2", "a", "b", "c")})
	second.comment(pr2.Number, "alice", "/plan")
	if cr := second.completed(pr2.HeadSHA(), plan); cr.Conclusion != "success" || cr.Title != "No changes" {
		t.Fatalf("PR 2 plan on another replica = %s %q %q; want No changes", cr.Conclusion, cr.Title, cr.Summary)
	}
	second.WaitIdle(layersWait)
	if now, _ := second.Server.Store().StateVersions(ctx, key, 0); len(now) != len(afterOne) {
		t.Fatalf("PR 2's plan wrote the state: %d versions, had %d", len(now), len(afterOne))
	}
	second.Repo.ClosePR(pr2.Number, false)
	second.Deliver(second.Repo.PullRequestEvent("closed", pr2.Number))
	second.WaitIdle(layersWait)

	// Two replicas: PR #3 removes c, and its apply destroys c only.
	third := second.another(t, apptest.Options{GitHub: second.GitHub, DatabaseURL: db, Configure: configure})
	pr3 := second.openPR("three", "alice", map[string]string{layer + "/main.tf": stateLayer("PR 3", "a", "b")})
	third.comment(pr3.Number, "alice", "/plan")
	if cr := third.completed(pr3.HeadSHA(), plan); cr.Conclusion != "success" || cr.Title != "0 to add, 0 to change, 1 to destroy" ||
		!strings.Contains(cr.Text, `terraform_data.c`) || strings.Contains(cr.Text, `terraform_data.a will`) {
		t.Fatalf("PR 3 plan = %s %q\n%s", cr.Conclusion, cr.Title, cr.Text)
	}
	second.comment(pr3.Number, "alice", "/apply")
	if cr := third.completed(pr3.HeadSHA(), apply); cr.Conclusion != "success" || !strings.Contains(cr.Text, "Resources: 0 added, 0 changed, 1 destroyed") {
		t.Fatalf("PR 3 apply = %s %q %q", cr.Conclusion, cr.Summary, cr.Text)
	}
	second.WaitIdle(layersWait)
	third.WaitIdle(layersWait)

	store3 := third.Server.Store()
	versions, err := store3.StateVersions(ctx, key, 0)
	if err != nil || len(versions) <= len(afterOne) {
		t.Fatalf("versions after PR 3 = %d (%v), had %d", len(versions), err, len(afterOne))
	}
	if v := versions[0]; v.PR != pr3.Number || v.Commit != pr3.HeadSHA() || v.Serial <= afterOne[0].Serial || v.Lineage != afterOne[0].Lineage {
		t.Fatalf("PR 3's version = %+v after %+v", v, afterOne[0])
	}
	content, _, err := store3.CurrentState(ctx, key)
	// Terraform indents its state, OpenTofu does not.
	flat := strings.Join(strings.Fields(string(content)), "")
	if err != nil || !strings.Contains(flat, `"name":"a"`) || strings.Contains(flat, `"name":"c"`) {
		t.Fatalf("state after PR 3 (%v):\n%s", err, content)
	}
	for _, v := range versions {
		if v.PR != pr1.Number && v.PR != pr3.Number {
			t.Errorf("a version written by PR #%d (run %d): only the applies write", v.PR, v.RunID)
		}
	}
	if l, _ := store3.StateLockOf(ctx, key); l != nil {
		t.Errorf("a state lock is left: %+v", l)
	}
	noViolations(t, third.GitHub)
}
