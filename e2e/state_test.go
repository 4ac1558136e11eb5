package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"reflect"
	"strconv"
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

// Managed state end to end, on Terraform and OpenTofu, on PostgreSQL, as
// issue 18 tells it: PR #1 applies a new layer that declares no backend;
// after a restart, a replica that never ran the layer (its own data dir)
// plans PR #2, which changes nothing, and gets "No changes" (the state came
// from the store), and its apply writes no version; with a second replica
// beside it, PR #3 removes a resource and its apply destroys exactly that
// one. The store holds exactly the two applies' versions, with their runs,
// PRs and commits, and no state lock is left. Then the layer's page, as an
// admin sees it, lists them; the admin downloads PR #1's and rolls back to
// it, a writer is refused both; and the next plan reads the rolled-back
// state: the resource PR #3 destroyed is in it again.
func TestManagedState(t *testing.T) {
	for _, kind := range []string{config.EngineTerraform, config.EngineTofu} {
		t.Run(kind, func(t *testing.T) { managedStateScenario(t, kind) })
	}
}

func managedStateScenario(t *testing.T, kind string) {
	requireTerraform(t)
	var binaries []config.Binary
	if kind == config.EngineTofu {
		binaries = append(binaries, config.Binary{Path: tofuBin(t), Kind: config.EngineTofu})
	}
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
		c.Terraform.Binaries = append(c.Terraform.Binaries, binaries...)
	}
	db := storetest.URL(t, store.Postgres)
	first := startLayers(t, apptest.Options{DatabaseURL: db, Configure: configure}, nil, map[string]string{
		".strata.yaml":     "version: 1\nengine: " + kind + "\nlayers:\n  - dir: " + layer + "\n",
		layer + "/main.tf": stateLayer("main", "a", "b", "c"),
	})
	first.Repo.SetPermission("alice", "write")
	first.Repo.SetPermission("olivia", "admin")
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
	// One version: Terraform and OpenTofu persist the state to the http
	// backend when the apply ends (and every 20 s of a long apply, not
	// reached here); a write of the same serial and content again is
	// kept once (store.PutState).
	afterOne, err := st.StateVersions(ctx, key, 0)
	if err != nil || len(afterOne) != 1 {
		t.Fatalf("after PR 1's apply: %s (%v); want one version", describeVersions(afterOne), err)
	}
	v1 := afterOne[0]
	if v1.PR != pr1.Number || v1.Commit != pr1.HeadSHA() || v1.Kind != store.StateByRun || v1.RunID == 0 {
		t.Fatalf("PR 1's version = %+v; want its run, PR and head", v1)
	}
	logs := strings.Join(runLogs(t, st, "layer_apply", key.Repo), "\n")
	if !strings.Contains(logs, "[strata] state: kept by Strata") {
		t.Errorf("the apply's log does not say the state is Strata's:\n%s", logs)
	}
	first.Repo.ClosePR(pr1.Number, true)
	first.Deliver(first.Repo.PullRequestEvent("closed", pr1.Number))
	first.WaitIdle(layersWait)
	first.Stop()

	// A restart onto another replica's disk: PR #2 changes nothing, and
	// applying it writes no version (the state did not change).
	second := first.another(t, apptest.Options{GitHub: first.GitHub, DatabaseURL: db, Configure: configure})
	pr2 := second.openPR("two", "alice", map[string]string{layer + "/main.tf": stateLayer("PR 2", "a", "b", "c")})
	second.comment(pr2.Number, "alice", "/plan")
	if cr := second.completed(pr2.HeadSHA(), plan); cr.Conclusion != "success" || cr.Title != "No changes" {
		t.Fatalf("PR 2 plan on another replica = %s %q %q; want No changes", cr.Conclusion, cr.Title, cr.Summary)
	}
	second.comment(pr2.Number, "alice", "/apply")
	if cr := second.completed(pr2.HeadSHA(), apply); cr.Conclusion != "success" || !strings.Contains(cr.Text, "Resources: 0 added, 0 changed, 0 destroyed") {
		t.Fatalf("PR 2 apply = %s %q %q", cr.Conclusion, cr.Summary, cr.Text)
	}
	second.WaitIdle(layersWait)
	if now, _ := second.Server.Store().StateVersions(ctx, key, 0); len(now) != 1 {
		t.Fatalf("PR 2's plan and apply of no changes wrote the state: %s", describeVersions(now))
	}
	second.Repo.ClosePR(pr2.Number, false)
	second.Deliver(second.Repo.PullRequestEvent("closed", pr2.Number))
	second.WaitIdle(layersWait)

	// Two replicas: PR #3 removes c, and its apply destroys c only. The
	// third serves the web UI below (Local: its public URL is its own).
	third := second.another(t, apptest.Options{GitHub: second.GitHub, DatabaseURL: db, Configure: configure, Local: true})
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

	// The issue counts "three versions" before the rollback; what Strata
	// keeps is one version per apply that changed the state: PR #1's and
	// PR #3's. PR #2's plan and apply changed nothing, and a backend that
	// kept a copy of an unchanged state (or a plan's read) would bury the
	// versions that matter under duplicates. So two, and the rollback is
	// the third.
	store3 := third.Server.Store()
	versions, err := store3.StateVersions(ctx, key, 0)
	if err != nil || len(versions) != 2 {
		t.Fatalf("after PR 3's apply: %s (%v); want PR 1's and PR 3's versions", describeVersions(versions), err)
	}
	v3 := versions[0]
	if v3.PR != pr3.Number || v3.Commit != pr3.HeadSHA() || v3.Kind != store.StateByRun || v3.Serial != v1.Serial+1 || v3.Lineage != v1.Lineage {
		t.Fatalf("PR 3's version = %+v after %+v", v3, v1)
	}
	content, _, err := store3.CurrentState(ctx, key)
	// Terraform indents its state, OpenTofu does not.
	flat := strings.Join(strings.Fields(string(content)), "")
	if err != nil || !strings.Contains(flat, `"name":"a"`) || strings.Contains(flat, `"name":"c"`) {
		t.Fatalf("state after PR 3 (%v):\n%s", err, content)
	}
	if l, _ := store3.StateLockOf(ctx, key); l != nil {
		t.Errorf("a state lock is left: %+v", l)
	}
	third.Repo.ClosePR(pr3.Number, true)
	third.Deliver(third.Repo.PullRequestEvent("closed", pr3.Number))
	third.WaitIdle(layersWait)
	second.WaitIdle(layersWait)

	rolledBack := stateThroughTheUI(t, third, key, v1, v3)
	if n := strings.Join(strings.Fields(string(rolledBack)), ""); !strings.Contains(n, `"name":"c"`) {
		t.Fatalf("the rolled-back state has no c:\n%s", rolledBack)
	}

	// The next plan reads the rolled-back state: c, which PR #3 destroyed,
	// is in it again, and the default branch's config (a and b) has it
	// destroyed, where PR #2's same config had no changes.
	pr4 := third.openPR("four", "alice", map[string]string{layer + "/main.tf": stateLayer("PR 4", "a", "b")})
	second.comment(pr4.Number, "alice", "/plan")
	if cr := third.completed(pr4.HeadSHA(), plan); cr.Conclusion != "success" || cr.Title != "0 to add, 0 to change, 1 to destroy" ||
		!strings.Contains(cr.Text, `terraform_data.c`) {
		t.Fatalf("PR 4 plan after the rollback = %s %q\n%s; want c, back in the state, to destroy", cr.Conclusion, cr.Title, cr.Text)
	}
	second.WaitIdle(layersWait)
	third.WaitIdle(layersWait)
	if vs, _ := store3.StateVersions(ctx, key, 0); len(vs) != 3 {
		t.Errorf("PR 4's plan wrote the state: %s", describeVersions(vs))
	}
	noViolations(t, third.GitHub)
}

// stateThroughTheUI plays the layer's page after PR #1's version (v1) and
// PR #3's (v3): the admin olivia sees both, with their serials, runs, PRs
// and commits; alice, a writer, is refused a download and a rollback;
// olivia downloads v1 and rolls back to it with the page's form. It returns
// the state after the rollback, which is v1's content at a new serial.
func stateThroughTheUI(t *testing.T, e *layersEnv, key store.StateKey, v1, v3 *store.StateVersion) []byte {
	t.Helper()
	ctx := context.Background()
	st := e.Server.Store()
	base := e.Config.PublicURL
	page := "/repos/" + key.Repo + "/layers/" + url.PathEscape(key.Layer)
	ws := page + "/state/default"
	download := ws + "/" + strconv.FormatInt(v1.ID, 10)
	rollback := download + "/rollback"
	want, _, err := st.StateVersionContent(ctx, key, v1.ID)
	if err != nil {
		t.Fatal(err)
	}

	olivia := uiLogin(t, e.Env, "olivia")
	res, body := fetchPage(t, olivia, base+page)
	table := between(body, `<table class="state-versions" data-workspace="default">`, "</table>")
	if res.StatusCode != http.StatusOK || strings.Count(table, "<tr data-version=") != 2 {
		t.Fatalf("olivia's layer page: %d, want PR 1's and PR 3's versions:\n%s", res.StatusCode, table)
	}
	for _, v := range []*store.StateVersion{v3, v1} {
		row := between(table, fmt.Sprintf(`<tr data-version="%d"`, v.ID), "</tr>")
		for _, w := range []string{fmt.Sprintf(`data-serial="%d" data-kind="run"`, v.Serial), fmt.Sprintf(`<a href="/runs/%d">%d</a>`, v.RunID, v.RunID),
			fmt.Sprintf(">#%d</a>", v.PR), "<code class=\"hide-narrow\">" + v.Commit[:7] + "</code>"} {
			if !strings.Contains(row, w) {
				t.Errorf("the row of version %d (PR #%d) lacks %q:\n%s", v.ID, v.PR, w, row)
			}
		}
	}
	if !strings.Contains(between(table, fmt.Sprintf(`<tr data-version="%d"`, v1.ID), "</tr>"), `<form class="state-rollback" method="post" action="`+rollback+`">`) {
		t.Fatalf("olivia's page has no Roll back on PR 1's version:\n%s", table)
	}

	// alice may write, not administer: no download, no rollback.
	alice := uiLogin(t, e.Env, "alice")
	if res, body := fetchPage(t, alice, base+download); res.StatusCode != http.StatusForbidden ||
		!strings.Contains(body, "downloading a state needs admin or higher") || strings.Contains(body, `"resources"`) {
		t.Errorf("alice's download: %d, want 403 with the reason and no state:\n%.2000s", res.StatusCode, body)
	}
	if res, body := uiPost(t, alice, base, rollback, true); res.StatusCode != http.StatusForbidden || !strings.Contains(body, "rolling a state back needs admin or higher") {
		t.Errorf("alice's rollback: %d, want 403 with the reason:\n%.2000s", res.StatusCode, body)
	}
	if vs, _ := st.StateVersions(ctx, key, 0); len(vs) != 2 {
		t.Fatalf("after alice's attempts: %s", describeVersions(vs))
	}

	res, err = olivia.Get(base + download)
	if err != nil {
		t.Fatal(err)
	}
	got := readAll(t, res)
	if res.StatusCode != http.StatusOK || got != string(want) || res.Header.Get("Content-Disposition") == "" {
		t.Errorf("olivia's download of PR 1's version: %d %v\n%s", res.StatusCode, res.Header, got)
	}
	// The page's own form: its action and its CSRF token.
	form := url.Values{"csrf": {csrfInput.FindStringSubmatch(between(table, `<form class="state-rollback" method="post" action="`+rollback+`">`, "</form>"))[1]}}
	res, err = olivia.PostForm(base+rollback, form)
	if err != nil {
		t.Fatal(err)
	}
	body = readAll(t, res)
	want3 := fmt.Sprintf("The state of %s was rolled back by @olivia: it is now at serial %d.", key.Layer, v3.Serial+1)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, want3) {
		t.Fatalf("olivia's rollback: %d, want %q:\n%.3000s", res.StatusCode, want3, body)
	}
	vs, err := st.StateVersions(ctx, key, 0)
	if err != nil || len(vs) != 3 {
		t.Fatalf("after the rollback: %s (%v); want a third version", describeVersions(vs), err)
	}
	rb := vs[0]
	if rb.Kind != store.StateByRollback || rb.By != "olivia" || rb.RolledBackFrom != v1.ID || rb.Serial != v3.Serial+1 || rb.Lineage != v1.Lineage || rb.RunID != 0 {
		t.Fatalf("the rollback's version = %+v; want a rollback to version %d by olivia at serial %d", rb, v1.ID, v3.Serial+1)
	}
	if table := between(body, `<table class="state-versions" data-workspace="default">`, "</table>"); strings.Count(table, "<tr data-version=") != 3 ||
		!strings.Contains(table, fmt.Sprintf(`data-serial="%d" data-kind="rollback"`, rb.Serial)) || !strings.Contains(table, "@olivia") {
		t.Errorf("the page after the rollback:\n%s", table)
	}
	content, _, err := st.CurrentState(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if diff := sameState(t, content, want); diff != "" {
		t.Errorf("the rolled-back state differs from PR 1's but for its serial: %s", diff)
	}
	return content
}

// sameState says how two states differ but for their serial, "" when
// they do not.
func sameState(t *testing.T, a, b []byte) string {
	t.Helper()
	var ma, mb map[string]any
	if err := json.Unmarshal(a, &ma); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &mb); err != nil {
		t.Fatal(err)
	}
	delete(ma, "serial")
	delete(mb, "serial")
	if reflect.DeepEqual(ma, mb) {
		return ""
	}
	return fmt.Sprintf("%v\nvs\n%v", ma, mb)
}

// describeVersions lists versions for a failure: serial, kind, PR, run.
func describeVersions(vs []*store.StateVersion) string {
	var parts []string
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("serial %d %s PR #%d run %d by %q", v.Serial, v.Kind, v.PR, v.RunID, v.By))
	}
	return fmt.Sprintf("%d versions [%s]", len(vs), strings.Join(parts, "; "))
}
