package e2e

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"strata.dev/strata/apptest"
	"strata.dev/strata/browsertest"
	"strata.dev/strata/engine/terraform/testprovider/providertest"
	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
)

// The web UI in a real browser (headless Chromium) against a real Strata and
// the fake GitHub: logging in through GitHub's OAuth pages, what a user
// sees, the buttons the permission table guards, and a run's log following
// the run.

// uiTab is a browser tab on a Strata server's web UI.
type uiTab struct {
	*browsertest.Tab
	t    *testing.T
	base string // the server's public URL
}

// openUI opens a tab, with cookies of its own, on the server's UI. The
// server must have started with apptest.Options{Local: true}.
func openUI(t *testing.T, b *browsertest.Browser, e *apptest.Env) *uiTab {
	t.Helper()
	return &uiTab{Tab: b.NewTab(), t: t, base: e.Config.PublicURL}
}

// path is the tab's URL path, with its query.
func (u *uiTab) path() string {
	u.t.Helper()
	loc, err := url.Parse(u.Location())
	if err != nil {
		u.t.Fatal(err)
	}
	return loc.RequestURI()
}

// open goes to a page of the UI and waits until sel shows.
func (u *uiTab) open(path, sel string) {
	u.t.Helper()
	u.Do(chromedp.Navigate(u.base+path), chromedp.WaitVisible(chromedp.CSS(sel)))
}

// login logs user in as a person does, from the page the tab is on (the
// login page, or any page that sent it there): Log in with GitHub, the
// user's name on GitHub's sign-in page, Authorize. It waits until Strata
// shows the user in its header.
func (u *uiTab) login(user string) {
	u.t.Helper()
	u.Do(
		chromedp.Click(chromedp.CSS("a#login")),
		chromedp.WaitVisible(chromedp.CSS("button#authorize")),
		chromedp.SendKeys(chromedp.CSS("input#login"), user),
		chromedp.Click(chromedp.CSS("button#authorize")),
		chromedp.WaitVisible(chromedp.CSS("header .who .login")),
	)
	if got := u.Text("header .who .login"); got != "@"+user {
		u.t.Fatalf("header shows %q after %s logged in, want @%s", got, user, user)
	}
}

// logout presses the header's Log out.
func (u *uiTab) logout() {
	u.t.Helper()
	u.Do(chromedp.Click(chromedp.CSS("header .who button")), chromedp.WaitVisible(chromedp.CSS("a#login")))
}

// onLoginPage asserts the tab shows the login page and nothing of what is
// behind it.
func (u *uiTab) onLoginPage(why string) {
	u.t.Helper()
	u.Do(chromedp.WaitVisible(chromedp.CSS("a#login")))
	if p := u.path(); !strings.HasPrefix(p, "/login") {
		u.t.Errorf("%s: on %s, want the login page", why, p)
	}
	body := u.Text("main")
	if strings.Contains(body, "acme/") || u.Count("table") != 0 || u.Count("header .who") != 0 {
		u.t.Errorf("%s: the login page shows more than the login:\n%s", why, body)
	}
}

// alice, who can read acme/infra only, logs in through GitHub's pages and
// sees acme/infra and not acme/vault, which the App is installed on too;
// logged out, a repository's page and the queue show only the login page.
func TestBrowserLoginShowsOnlyReadableRepos(t *testing.T) {
	e := apptest.Start(t, apptest.Options{Local: true})
	e.Repo.SetPermission("alice", "read")
	vault := e.GitHub.AddRepo("acme", "vault")
	vault.SetPermission("bob", "admin")
	b := browsertest.Start(t)

	tab := openUI(t, b, e)
	tab.Do(chromedp.Navigate(tab.base + "/"))
	tab.onLoginPage("/ logged out")
	tab.login("alice")
	tab.Do(chromedp.WaitVisible(chromedp.CSS("table#repos")))
	if p := tab.path(); p != "/" {
		t.Errorf("after login on %s, want / where the login began", p)
	}
	repos := tab.Text("table#repos")
	if !strings.Contains(repos, "acme/infra") || tab.Count(`table#repos a[href="/repos/acme/infra"]`) != 1 {
		t.Errorf("alice's repositories lack acme/infra:\n%s", repos)
	}
	if strings.Contains(repos, "vault") || strings.Contains(tab.Text("body"), "vault") {
		t.Errorf("alice, who cannot read acme/vault, sees it:\n%s", repos)
	}

	tab.logout()
	tab.Do(chromedp.Navigate(tab.base + "/"))
	tab.onLoginPage("/ after logging out")

	stranger := openUI(t, b, e)
	for _, p := range []string{"/repos/acme/infra", "/queue"} {
		stranger.Do(chromedp.Navigate(stranger.base + p))
		stranger.onLoginPage(p + " logged out")
		if got := stranger.path(); got != "/login?next="+url.QueryEscape(p) {
			t.Errorf("%s logged out went to %s, want the login page with the way back", p, got)
		}
	}
	noViolations(t, e.GitHub)
}

// wanda's PR plans infra/network and holds its lock. rita, a reader, presses
// Unlock on the repository page: refused with the permission table's
// reason, and the lock stays. wanda, a writer, presses it: the page says
// the unlock is on its way, the lock goes, and the button with it.
func TestBrowserUnlockRefusedForAReaderAllowedForAWriter(t *testing.T) {
	e, pr := wandaLocksNetwork(t)
	heldBy := func() int {
		l, err := e.Server.Store().Lock(t.Context(), e.Repo.FullName(), network)
		if err != nil {
			return 0
		}
		return l.PR
	}
	if heldBy() != pr.Number {
		t.Fatalf("after wanda's plan the lock is #%d's, want #%d's", heldBy(), pr.Number)
	}
	b := browsertest.Start(t)
	unlock := `form.unlock[data-layer="` + network + `"] button`

	rita := openUI(t, b, e.Env)
	rita.Do(chromedp.Navigate(rita.base + "/repos/acme/infra"))
	rita.onLoginPage("the repository page logged out")
	rita.login("rita")
	rita.Do(chromedp.WaitVisible(chromedp.CSS(unlock)))
	if p := rita.path(); p != "/repos/acme/infra" {
		t.Errorf("after login rita is on %s, want back on the repository page", p)
	}
	if row := rita.Text(`tr[data-layer="` + network + `"]`); !strings.Contains(row, "#"+strconv.Itoa(pr.Number)) || !strings.Contains(row, "@wanda") {
		t.Errorf("the layer's row does not name the lock's PR and holder: %q", row)
	}
	rita.Do(chromedp.Click(chromedp.CSS(unlock)), chromedp.WaitVisible(chromedp.CSS("#refusal")))
	if why := rita.Text("#refusal"); !strings.Contains(why, "@rita has read permission") || !strings.Contains(why, "needs write or higher") {
		t.Errorf("rita's Unlock refused with %q, want the permission table's reason", why)
	}
	if rita.Count(".flash") != 0 {
		t.Errorf("a refused unlock shows a success message: %q", rita.Text(".flash"))
	}
	e.WaitIdle(layersWait)
	if heldBy() != pr.Number {
		t.Fatalf("after rita's Unlock the lock is #%d's, want still #%d's", heldBy(), pr.Number)
	}

	wanda := openUI(t, b, e.Env)
	wanda.Do(chromedp.Navigate(wanda.base + "/repos/acme/infra"))
	wanda.login("wanda")
	wanda.Do(chromedp.Click(chromedp.CSS(unlock)), chromedp.WaitVisible(chromedp.CSS(".flash")))
	if msg := wanda.Text(".flash"); !strings.Contains(msg, "Unlock of "+network+" requested by @wanda") {
		t.Errorf("wanda's Unlock says %q", msg)
	}
	if wanda.Count("#refusal") != 0 {
		t.Errorf("wanda's Unlock was refused: %q", wanda.Text("#refusal"))
	}
	e.WaitFor(layersWait, func() bool { return heldBy() == 0 })
	if lock := e.completed(pr.HeadSHA(), networkLock); lock.Title != "Lock released" {
		t.Errorf("lock check after wanda's Unlock = %q %q", lock.Title, lock.Summary)
	}
	wanda.Do(chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("table#layers")))
	if n := wanda.Count(`form.unlock[data-layer="` + network + `"]`); n != 0 {
		t.Errorf("after the unlock the page still has %d Unlock buttons for %s", n, network)
	}
	noViolations(t, e.GitHub)
}

// A plan held at a gate of the test provider: its run's page shows the
// lines Terraform printed so far, live; the plan goes on to a second gate
// and the page grows without a reload while the run is still running; the
// plan ends and the page shows its end, and the state it ended in.
func TestBrowserRunLogGrowsWhileAPlanRuns(t *testing.T) {
	e := startProviderLayers(t, apptest.Options{Local: true}, map[string][]providertest.Thing{network: nil})
	e.Repo.SetPermission("wanda", "write")
	// The second gate is read once the first opens: its name depends on it.
	main := e.layer(network, providertest.Thing{Name: "a", Value: "one"}) + providertest.Gate("first") +
		"\ndata \"world_gate\" \"then\" {\n  name = \"${data.world_gate.first.name}-then\"\n}\n"
	pr := e.openPR("slow", "wanda", map[string]string{network + "/main.tf": main})
	e.comment(pr.Number, "wanda", "/plan")
	var run *store.Run
	e.WaitFor(layersWait, func() bool {
		runs, err := e.Server.Store().RunningRuns(t.Context(), e.Repo.FullName(), pr.Number, jobs.LayerPlan{}.Kind())
		if err == nil && len(runs) == 1 {
			run = runs[0]
		}
		return run != nil
	})

	tab := openUI(t, browsertest.Start(t), e.Env)
	page := "/runs/" + strconv.FormatInt(run.ID, 10)
	tab.Do(chromedp.Navigate(tab.base + page))
	tab.login("wanda")
	tab.Do(chromedp.WaitVisible(chromedp.CSS("pre#log")))
	if p := tab.path(); p != page {
		t.Fatalf("after login on %s, want back on %s", p, page)
	}
	const logText = `document.getElementById("log").textContent`
	tab.Until("the plan's first lines while it waits at the first gate", logText+`.includes("data.world_gate.first: Reading...")`)
	tab.stillRunning("at the first gate")
	if log := tab.Text("pre#log"); strings.Contains(log, "world_gate.then") {
		t.Fatalf("the log shows the second gate before the first opened:\n%s", log)
	}
	// What follows must come to this page as it is, without a reload.
	tab.Do(chromedp.Evaluate[chromedp.Void](`window.strataSamePage = true`))

	e.world.OpenGate(t, "first")
	tab.Until("the log growing while the plan runs", logText+`.includes("data.world_gate.then: Reading...")`)
	tab.stillRunning("at the second gate")

	e.world.OpenGate(t, "first-then")
	tab.Until("the run's end on its page", `!document.getElementById("log").classList.contains("live")`)
	// The pill says what the plan's check concluded.
	if state := tab.Text("#run-state"); state != "success" {
		t.Errorf("run state at the end = %q, want success (the plan check's conclusion)", state)
	}
	if log := tab.Text("pre#log"); !strings.Contains(log, "Plan: 1 to add, 0 to change, 0 to destroy") {
		t.Errorf("the log at the end lacks the plan's summary:\n%s", log)
	}
	if !browsertest.Run(tab.Tab, chromedp.Evaluate[bool](`window.strataSamePage === true`)) {
		t.Error("the page was reloaded: the log did not follow the run on its own")
	}
	e.completed(pr.HeadSHA(), networkPlan)
	noViolations(t, e.GitHub)
}

// stillRunning asserts a run's page shows it running, its log live.
func (u *uiTab) stillRunning(when string) {
	u.t.Helper()
	if state := u.Text("#run-state"); state != store.RunRunning {
		u.t.Fatalf("%s the run's state shows %q, want %s", when, state, store.RunRunning)
	}
	if !browsertest.Run(u.Tab, chromedp.Evaluate[bool](`document.getElementById("log").classList.contains("live")`)) {
		u.t.Fatalf("%s the run's log is not live", when)
	}
}

// ScreenshotsEnv names the directory TestBrowserScreenshots saves its PNGs
// in. The README's are made with
//
//	STRATA_SCREENSHOTS=$PWD/docs/screenshots go test ./e2e/ -run TestBrowserScreenshots -count=1
const ScreenshotsEnv = "STRATA_SCREENSHOTS"

// The main pages, in a light and a dark color scheme, and the repository
// page at a phone's width, each showing what it is for: two PRs hold a
// layer each, one's plan done with its log, the other's running (held at a
// gate of the test provider), so the queue has a job. With
// $STRATA_SCREENSHOTS it saves each as a PNG there; without, it still
// opens each and asserts what it shows.
func TestBrowserScreenshots(t *testing.T) {
	dir := os.Getenv(ScreenshotsEnv)
	const app = "infra/app"
	e := startProviderLayers(t, apptest.Options{Local: true}, map[string][]providertest.Thing{network: nil, app: nil})
	e.Repo.SetPermission("wanda", "write")
	e.Repo.SetPermission("bob", "write")
	one := e.openPR("grow", "wanda", map[string]string{network + "/main.tf": e.layer(network,
		providertest.Thing{Name: "vpc", Value: "10.0.0.0/16"}, providertest.Thing{Name: "subnet", Value: "10.0.1.0/24"})})
	e.comment(one.Number, "wanda", "/plan")
	e.completed(one.HeadSHA(), networkPlan)
	two := e.openPR("app", "bob", map[string]string{app + "/main.tf": e.layer(app, providertest.Thing{Name: "web", Value: "v2"}) + providertest.Gate("hold")})
	e.comment(two.Number, "bob", "/plan")
	e.WaitFor(layersWait, func() bool {
		runs, err := e.Server.Store().RunningRuns(t.Context(), e.Repo.FullName(), two.Number, jobs.LayerPlan{}.Kind())
		if err != nil || len(runs) != 1 {
			return false
		}
		// The runs' rows hold no log: its chunks do (store.Run reads them).
		run, err := e.Server.Store().Run(t.Context(), runs[0].ID)
		return err == nil && strings.Contains(run.Log, "data.world_gate.hold: Reading...")
	})
	t.Cleanup(func() { e.world.OpenGate(t, "hold") }) // before the server stops: cleanups run last first
	run, err := e.Server.Store().LatestRun(t.Context(), e.Repo.FullName(), jobs.LayerPlan{}.Kind(), network)
	if err != nil {
		t.Fatal(err)
	}

	b := browsertest.Start(t)
	pages := []struct {
		name, path, sel, want string
		show                  string // JavaScript that brings what matters into view
	}{
		{"repos", "/", "table#repos", "acme/infra", ""},
		{"repo", "/repos/acme/infra", `form.unlock[data-layer="` + network + `"] button`, "@wanda", ""},
		{"layer", "/repos/acme/infra/layers/" + url.PathEscape(network), "table#runs", "plan", ""},
		{"run", "/runs/" + strconv.FormatInt(run.ID, 10), "pre#log", "Plan: 2 to add, 0 to change, 0 to destroy",
			// The plan, not terraform init, at the end of the log.
			`(l => { l.scrollTop = l.scrollHeight; l.scrollIntoView({block: "end"}) })(document.getElementById("log"))`},
		{"queue", "/queue", "table#queue", app, ""},
	}
	for _, scheme := range []string{"light", "dark"} {
		tab := openUI(t, b, e.Env)
		tab.Do(colorScheme(scheme), chromedp.EmulateViewport(1280, 800))
		tab.Do(chromedp.Navigate(tab.base + "/"))
		tab.onLoginPage("/ logged out")
		tab.shot(dir, "login-"+scheme)
		tab.login("wanda")
		for _, p := range pages {
			tab.open(p.path, p.sel)
			if text := tab.Text("main"); !strings.Contains(text, p.want) {
				t.Errorf("%s (%s) lacks %q:\n%s", p.name, p.path, p.want, text)
			}
			if p.show != "" {
				tab.Do(chromedp.Evaluate[chromedp.Void](p.show))
			}
			tab.shot(dir, p.name+"-"+scheme)
		}
		tab.Do(chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
		tab.open("/repos/acme/infra", `form.unlock[data-layer="`+network+`"] button`)
		if wide := browsertest.Run(tab.Tab, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth`)); wide {
			t.Errorf("the repository page is wider than a phone (%s)", scheme)
		}
		// The button a phone user came for is on the screen, not behind a
		// sideways scroll of the table.
		unlock := `(b => b.getBoundingClientRect().right <= Math.min(window.innerWidth, b.closest(".table-wrap").getBoundingClientRect().right))` +
			`(document.querySelector('form.unlock[data-layer="` + network + `"] button'))`
		if visible := browsertest.Run(tab.Tab, chromedp.Evaluate[bool](unlock)); !visible {
			t.Errorf("the Unlock button is off a phone's screen (%s)", scheme)
		}
		tab.shot(dir, "repo-phone-"+scheme)
	}
}

// colorScheme makes the tab's pages prefer a light or a dark color scheme.
func colorScheme(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
		})
		return err
	})
}

// shot saves what the tab shows as dir/name.png, when dir is set.
func (u *uiTab) shot(dir, name string) {
	u.t.Helper()
	if dir == "" {
		return
	}
	png := browsertest.Run(u.Tab, chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		u.t.Fatal(err)
	}
}
