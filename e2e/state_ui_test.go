package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/store"
)

// stateFile is a Terraform state with this serial and lineage, and an
// output that tells versions apart.
func stateFile(serial int, lineage, marker string) []byte {
	return []byte(fmt.Sprintf(`{"version":4,"terraform_version":"1.5.7","serial":%d,"lineage":%q,"outputs":{"m":{"value":%q,"type":"string"}},"resources":[],"check_results":null}`,
		serial, lineage, marker))
}

// putStates plants versions of acme/infra's state of layer as three applies
// of PRs 1, 2 and 3 would write them, and returns them oldest first.
func putStates(t *testing.T, st *store.Store, layer string) []*store.StateVersion {
	t.Helper()
	var out []*store.StateVersion
	for i := 1; i <= 3; i++ {
		v, err := st.PutState(context.Background(), store.StateKey{Repo: "acme/infra", Layer: layer}, stateFile(i, "lineage-abcdef-123", "v"+strconv.Itoa(i)),
			store.StateVersion{PR: i, Commit: fmt.Sprintf("%040d", i)}, false, 0)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

// The layer page's managed state: a writer sees the versions and no
// button, and every action they craft is refused with the table's reason
// and changes nothing; an admin downloads a version (an attachment never
// cached), is refused a rollback while Terraform holds the state's lock,
// clears the lock, and rolls back: a fourth version, by them.
func TestUIStateVersionsRollbackAndUnlock(t *testing.T) {
	e := apptest.Start(t, apptest.Options{Local: true, Configure: stateOnAnyPort})
	e.Repo.SetPermission("wanda", "write")
	e.Repo.SetPermission("olivia", "admin")
	st := e.Server.Store()
	ctx := t.Context()
	key := store.StateKey{Repo: "acme/infra", Layer: "infra/net"}
	versions := putStates(t, st, key.Layer)
	if _, ok, err := st.LockState(ctx, key, store.StateLock{ID: "stuck-lock", RunID: 77,
		Info: []byte(`{"ID":"stuck-lock","Operation":"OperationTypeApply","Who":"runner@strata","Created":"2026-12-04T10:00:00Z"}`)}); err != nil || !ok {
		t.Fatalf("plant a state lock: %v, %v", ok, err)
	}
	base := e.Config.PublicURL
	page := "/repos/acme/infra/layers/infra%2Fnet"
	ws := page + "/state/default"
	v1 := strconv.FormatInt(versions[0].ID, 10)

	wanda := uiLogin(t, e, "wanda")
	res, body := fetchPage(t, wanda, base+page)
	table := between(body, `<table class="state-versions" data-workspace="default">`, "</table>")
	if res.StatusCode != http.StatusOK || strings.Count(table, "<tr data-version=") != 3 {
		t.Fatalf("wanda's layer page: %d, want three versions:\n%s", res.StatusCode, body)
	}
	for _, want := range []string{`data-serial="3" data-kind="run"`, `<code title="lineage-abcdef-123">lineage-</code>`, ">#2<", "state locked",
		"run 77", "OperationTypeApply", "runner@strata", "stuck-lock", `id="state-admin-only"`} {
		if !strings.Contains(body, want) {
			t.Errorf("wanda's layer page lacks %q", want)
		}
	}
	for _, button := range []string{"state-download", "state-rollback", "state-unlock"} {
		if strings.Contains(body, `class="`+button+`"`) {
			t.Errorf("wanda, a writer, sees the %s button", button)
		}
	}
	// The attacks: a writer crafts each request the buttons would send.
	res, body = fetchPage(t, wanda, base+ws+"/"+v1)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "@wanda has write permission on this repository; downloading a state needs admin or higher.") ||
		strings.Contains(body, `"v1"`) {
		t.Errorf("wanda's download: %d, want 403 with the reason and no state:\n%.3000s", res.StatusCode, body)
	}
	res, body = uiPost(t, wanda, base, ws+"/"+v1+"/rollback", true)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "rolling a state back needs admin or higher") {
		t.Errorf("wanda's rollback: %d, want 403 with the reason:\n%.3000s", res.StatusCode, body)
	}
	res, body = uiPost(t, wanda, base, ws+"/unlock", true)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "clearing a state lock needs admin or higher") {
		t.Errorf("wanda's force unlock: %d, want 403 with the reason:\n%.3000s", res.StatusCode, body)
	}
	if vs, _ := st.StateVersions(ctx, key, 0); len(vs) != 3 {
		t.Errorf("after wanda's attempts: %d versions, want 3", len(vs))
	}
	if l, _ := st.StateLockOf(ctx, key); l == nil {
		t.Error("wanda's crafted post cleared the state lock")
	}

	olivia := uiLogin(t, e, "olivia")
	_, body = fetchPage(t, olivia, base+page)
	if n := strings.Count(body, `class="state-download"`); n != 3 {
		t.Errorf("olivia, an admin, sees %d Download links, want 3", n)
	}
	if n := strings.Count(body, `<form class="state-rollback"`); n != 2 {
		t.Errorf("olivia sees %d Roll back buttons, want 2 (not on the current version)", n)
	}
	if !strings.Contains(body, `<form class="state-unlock" data-workspace="default" method="post" action="`+ws+`/unlock">`) {
		t.Errorf("olivia sees no Force unlock:\n%s", between(body, `<h2>State</h2>`, "</table>"))
	}
	res, err := olivia.Get(base + ws + "/" + v1)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || string(got) != string(stateFile(1, "lineage-abcdef-123", "v1")) {
		t.Errorf("olivia's download: %d %q", res.StatusCode, got)
	}
	if h := res.Header; h.Get("Cache-Control") != "no-store" || h.Get("Content-Disposition") != `attachment; filename="infra_net-default-serial-1.tfstate"` ||
		h.Get("Content-Type") != "application/json" {
		t.Errorf("download headers: %v", h)
	}
	// Terraform holds the lock: no rollback under it.
	res, body = uiPost(t, olivia, base, ws+"/"+v1+"/rollback", true)
	if res.StatusCode != http.StatusConflict || !strings.Contains(body, "locked by Terraform (lock stuck-lock)") {
		t.Errorf("olivia's rollback under the lock: %d, want 409 naming the lock:\n%.3000s", res.StatusCode, body)
	}
	res, body = uiPost(t, olivia, base, ws+"/unlock", true)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "The state lock of infra/net was cleared.") || strings.Contains(body, "state locked") {
		t.Errorf("olivia's force unlock: %d:\n%.3000s", res.StatusCode, body)
	}
	res, body = uiPost(t, olivia, base, ws+"/"+v1+"/rollback", true)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "The state of infra/net was rolled back by @olivia: it is now at serial 4.") {
		t.Errorf("olivia's rollback: %d:\n%.3000s", res.StatusCode, body)
	}
	vs, err := st.StateVersions(ctx, key, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != 4 || vs[0].Kind != store.StateByRollback || vs[0].By != "olivia" || vs[0].RolledBackFrom != versions[0].ID || vs[0].Serial != 4 {
		t.Fatalf("after the rollback: %d versions, newest %+v; want a fourth, a rollback to version %d by olivia at serial 4", len(vs), vs[0], versions[0].ID)
	}
	content, _, err := st.CurrentState(ctx, key)
	if err != nil || !strings.Contains(string(content), `"value": "v1"`) {
		t.Errorf("the current state after the rollback: %s, %v; want v1's content", content, err)
	}
	if table := between(body, `<table class="state-versions" data-workspace="default">`, "</table>"); strings.Count(table, "<tr data-version=") != 4 ||
		!strings.Contains(table, `data-serial="4" data-kind="rollback"`) || !strings.Contains(table, "@olivia") {
		t.Errorf("the page after the rollback:\n%s", table)
	}
}

// stateOnAnyPort gives the test server's loopback state backend a port of
// its own: test servers run side by side.
func stateOnAnyPort(c *config.Server) { c.State.Addr = "127.0.0.1:0" }
