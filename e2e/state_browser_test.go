package e2e

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"strata.dev/strata/apptest"
	"strata.dev/strata/browsertest"
	"strata.dev/strata/store"
)

// The layer page's managed state in a real browser: olivia, an admin,
// logs in from the layer page and is back on it; she sees the three
// versions and the state lock Terraform left; Roll back… asks her to
// confirm before anything is posted; confirmed under the lock, it is
// refused naming the lock; she clears the lock with Force unlock, rolls
// back to the first version, and sees the fourth version, a rollback by
// her, at the top of the table. The page's script and the
// Content-Security-Policy hold throughout (browsertest fails on a console
// error).
func TestBrowserStateRollbackAndUnlock(t *testing.T) {
	e := apptest.Start(t, apptest.Options{Local: true})
	e.Repo.SetPermission("olivia", "admin")
	st := e.Server.Store()
	key := store.StateKey{Repo: "acme/infra", Layer: "infra/net"}
	versions := putStates(t, st, key.Layer)
	if _, ok, err := st.LockState(t.Context(), key, store.StateLock{ID: "stuck-lock", RunID: 77,
		Info: []byte(`{"ID":"stuck-lock","Operation":"OperationTypeApply","Who":"runner@strata","Created":"2026-12-04T10:00:00Z"}`)}); err != nil || !ok {
		t.Fatalf("plant a state lock: %v, %v", ok, err)
	}
	const page = "/repos/acme/infra/layers/infra%2Fnet"
	const rows = `table.state-versions[data-workspace="default"] tbody tr`
	first := fmt.Sprintf(`tr[data-version="%d"]`, versions[0].ID)
	summary, confirm := first+" details.confirm summary", first+" form.state-rollback button"

	b := browsertest.Start(t)
	olivia := openUI(t, b, e)
	olivia.Do(chromedp.Navigate(olivia.base + page))
	olivia.onLoginPage("the layer page logged out")
	olivia.login("olivia")
	olivia.Do(chromedp.WaitVisible(chromedp.CSS(rows)))
	if p := olivia.path(); p != page {
		t.Errorf("after login olivia is on %s, want back on the layer page", p)
	}
	if n := olivia.Count(rows); n != 3 {
		t.Fatalf("the versions table has %d rows, want 3", n)
	}
	lock := olivia.Text("#state-lock-default")
	for _, want := range []string{"state locked", "run 77", "OperationTypeApply", "runner@strata", "stuck-lock"} {
		if !strings.Contains(lock, want) {
			t.Errorf("the state lock shows %q, lacking %q", lock, want)
		}
	}
	// The rollback's button is behind Roll back…: a stray click posts
	// nothing.
	if visible := browsertest.Run(olivia.Tab, chromedp.Evaluate[bool](fmt.Sprintf(`document.querySelector(%q).checkVisibility()`, confirm))); visible {
		t.Error("the rollback's button shows before Roll back… is opened")
	}
	olivia.Do(chromedp.Click(chromedp.CSS(summary)), chromedp.WaitVisible(chromedp.CSS(confirm)))
	if label := olivia.Text(confirm); label != "Roll back to serial 1" {
		t.Errorf("the confirming button says %q", label)
	}
	olivia.Do(chromedp.Click(chromedp.CSS(confirm)), chromedp.WaitVisible(chromedp.CSS("#refusal")))
	if why := olivia.Text("#refusal"); !strings.Contains(why, "locked by Terraform (lock stuck-lock)") {
		t.Errorf("the rollback under the lock says %q, want the lock named", why)
	}
	if vs, _ := st.StateVersions(t.Context(), key, 0); len(vs) != 3 {
		t.Fatalf("a rollback under Terraform's lock made a version: %s", describeVersions(vs))
	}

	olivia.Do(chromedp.Click(chromedp.CSS(`form.state-unlock[data-workspace="default"] button`)), chromedp.WaitVisible(chromedp.CSS(".flash")))
	if msg := olivia.Text(".flash"); !strings.Contains(msg, "The state lock of infra/net was cleared.") {
		t.Errorf("Force unlock says %q", msg)
	}
	if n := olivia.Count("#state-lock-default"); n != 0 {
		t.Error("the state lock still shows after Force unlock")
	}
	if l, _ := st.StateLockOf(t.Context(), key); l != nil {
		t.Fatalf("the state lock is still held: %+v", l)
	}

	// The unlock's message shows until the rollback's page replaces it.
	olivia.Do(chromedp.Click(chromedp.CSS(summary)), chromedp.WaitVisible(chromedp.CSS(confirm)), chromedp.Click(chromedp.CSS(confirm)))
	olivia.Until("the rollback's page", `(document.querySelector(".flash") || {textContent: ""}).textContent.includes("rolled back")`)
	if msg := olivia.Text(".flash"); !strings.Contains(msg, "The state of infra/net was rolled back by @olivia: it is now at serial 4.") {
		t.Errorf("the rollback says %q", msg)
	}
	if n := olivia.Count(rows); n != 4 {
		t.Fatalf("after the rollback the table has %d rows, want 4", n)
	}
	top := rows + `[data-serial="4"][data-kind="rollback"]:first-child`
	if olivia.Count(top) != 1 {
		t.Fatalf("the newest row is not the rollback at serial 4:\n%s", olivia.Text(`table.state-versions[data-workspace="default"]`))
	}
	if row := olivia.Text(top); !strings.Contains(row, "@olivia") || !strings.Contains(row, fmt.Sprintf("of version %d", versions[0].ID)) || !strings.Contains(row, "current") {
		t.Errorf("the rollback's row shows %q", row)
	}
	vs, err := st.StateVersions(t.Context(), key, 0)
	if err != nil || len(vs) != 4 || vs[0].Kind != store.StateByRollback || vs[0].By != "olivia" || vs[0].RolledBackFrom != versions[0].ID {
		t.Fatalf("after the rollback: %s (%v)", describeVersions(vs), err)
	}
	noViolations(t, e.GitHub)
}
