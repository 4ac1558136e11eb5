package e2e

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/runlog"
	"strata.dev/strata/store"
)

// The web UI's login and sessions, attacked: by a stranger on the network,
// by a user after another's repositories, by a site that posts forms in a
// victim's browser, and by a login link made for someone else.

func uiEnv(t *testing.T) *apptest.Env {
	t.Helper()
	e := apptest.Start(t, apptest.Options{Local: true})
	e.Repo.SetPermission("alice", "read")
	secret := e.GitHub.AddRepo("acme", "secret")
	secret.SetPermission("bob", "admin")
	return e
}

// A stranger without a session sees the login page and nothing else, on
// every page; event streams and posts are refused outright.
func TestUIStrangerSeesOnlyTheLoginPage(t *testing.T) {
	e := uiEnv(t)
	run := startRunOf(t, e, "acme/infra")
	c := browser(t)
	for _, path := range []string{"/", "/repos/acme/infra", "/repos/acme/infra/layers/network", "/queue", "/runs/" + run} {
		res, body := fetchPage(t, c, e.Config.PublicURL+path)
		if res.Request.URL.Path != "/login" || !strings.Contains(body, "Log in to Strata") {
			t.Errorf("%s: a stranger ended on %s, want the login page", path, res.Request.URL)
		}
		if strings.Contains(body, "acme/infra") || strings.Contains(body, "acme/secret") {
			t.Errorf("%s: the login page names a repository:\n%s", path, body)
		}
	}
	res, _ := fetchPage(t, c, e.Config.PublicURL+"/runs/"+run+"/events")
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a stranger's event stream: %d, want 401", res.StatusCode)
	}
	res, err := c.PostForm(e.Config.PublicURL+"/repos/acme/infra/layers/network/unlock", url.Values{"csrf": {"x"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a stranger's unlock: %d, want 401", res.StatusCode)
	}
}

// A user sees the repositories GitHub lists for them, and another
// repository of the same installation answers as if it did not exist,
// its runs too. The log link's key still opens a run without a login.
func TestUIHidesRepositoriesTheUserCannotRead(t *testing.T) {
	e := uiEnv(t)
	secretRun := startRunOf(t, e, "acme/secret")
	alice := uiLogin(t, e, "alice")
	_, body := fetchPage(t, alice, e.Config.PublicURL+"/")
	if !strings.Contains(body, "acme/infra") || strings.Contains(body, "acme/secret") {
		t.Fatalf("alice's repositories should list acme/infra and not acme/secret:\n%s", body)
	}
	if !strings.Contains(body, "@alice") {
		t.Errorf("the header does not name the logged-in user")
	}
	_, missing := fetchPage(t, alice, e.Config.PublicURL+"/repos/acme/nothing")
	for _, path := range []string{"/repos/acme/secret", "/repos/acme/secret/layers/network", "/runs/" + secretRun, "/runs/" + secretRun + "/events"} {
		res, body := fetchPage(t, alice, e.Config.PublicURL+path)
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("alice GET %s: %d, want 404", path, res.StatusCode)
		}
		if strings.Contains(body, "acme/secret") {
			t.Errorf("alice GET %s names the repository", path)
		}
		if path == "/repos/acme/secret" && body != missing {
			t.Errorf("a repository alice cannot read answers unlike one that does not exist")
		}
	}
	bob := uiLogin(t, e, "bob")
	if _, body := fetchPage(t, bob, e.Config.PublicURL+"/"); !strings.Contains(body, "acme/secret") || strings.Contains(body, "acme/infra") {
		t.Errorf("bob's repositories should be acme/secret only:\n%s", body)
	}
	id := mustID(t, secretRun)
	res, body := fetchPage(t, browser(t), e.Config.PublicURL+"/runs/"+secretRun+"?key="+runlog.Key(apptest.WebhookSecret, id))
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") || !strings.Contains(body, "acme/secret") {
		t.Errorf("the log link with its key: %d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
}

// A session cookie changed by a byte, or sealed by a server with another
// secret, is no session.
func TestUISessionCookieCannotBeForged(t *testing.T) {
	e := uiEnv(t)
	value := sessionCookie(t, uiLogin(t, e, "alice"), e)
	other := apptest.Start(t, apptest.Options{Local: true, GitHub: e.GitHub, Configure: func(cfg *config.Server) {
		cfg.GitHub.WebhookSecret = "another-server-secret"
	}})
	foreign := sessionCookie(t, uiLogin(t, other, "alice"), other)
	flipped := []byte(value)
	flipped[len(flipped)/2] ^= 'A' ^ 'B'
	for name, v := range map[string]string{"a changed byte": string(flipped), "another server's seal": foreign, "garbage": "x"} {
		req, _ := http.NewRequest(http.MethodGet, e.Config.PublicURL+"/", nil)
		req.AddCookie(&http.Cookie{Name: "strata_session", Value: v})
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusFound || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
			t.Errorf("%s: %d to %q, want a redirect to the login page", name, res.StatusCode, res.Header.Get("Location"))
		}
	}
}

// An attacker signs in on GitHub as themselves and sends the victim the
// callback link with their code: the victim's browser did not begin that
// login, so it is refused and the victim is not logged in as the attacker.
func TestUILoginCannotBeForcedOnAVictim(t *testing.T) {
	e := uiEnv(t)
	e.Repo.SetPermission("mallory", "read")
	attacker := browser(t)
	attacker.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Path == "/api/github/auth" && req.URL.Query().Get("code") != "" {
			return http.ErrUseLastResponse // keep the callback for the victim
		}
		return nil
	}
	res := signIn(t, attacker, e.Config.PublicURL+"/api/github/auth", "mallory")
	res.Body.Close()
	callback := res.Header.Get("Location")
	if !strings.Contains(callback, "code=") {
		t.Fatalf("the attacker got no callback with a code: %d %q", res.StatusCode, callback)
	}
	victim := browser(t)
	res, body := fetchPage(t, victim, callback)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(body, "did not start in this browser") {
		t.Errorf("the victim following the attacker's callback: %d\n%s", res.StatusCode, body)
	}
	if res, _ := fetchPage(t, victim, e.Config.PublicURL+"/"); res.Request.URL.Path != "/login" {
		t.Errorf("the victim is logged in after the forced login: on %s", res.Request.URL)
	}
}

// Denying the App on GitHub's page ends on Strata's login page, saying so.
func TestUILoginDeniedOnGitHub(t *testing.T) {
	e := uiEnv(t)
	e.GitHub.DenyAuthorize()
	res := signIn(t, browser(t), e.Config.PublicURL+"/api/github/auth", "alice")
	page := readAll(t, res)
	if res.StatusCode != http.StatusForbidden || !strings.Contains(page, "You did not authorize Strata") {
		t.Errorf("denied on GitHub: %d\n%s", res.StatusCode, page)
	}
}

// After login the browser returns to the page it came from, on Strata
// only. An attacker's login link carries a next that a browser reads as
// another origin (the WHATWG URL parser drops tabs and newlines, strips
// leading spaces and controls, and takes "\\" for "/"): Strata's redirect
// after GitHub's callback is "/" then, and a page's own next comes back
// re-encoded. The Location is read as sent, not as Go's client would
// follow it.
func TestUILoginReturnsOnlyToStrataPages(t *testing.T) {
	e := uiEnv(t)
	for _, tc := range []struct{ next, want string }{
		{"/queue", "/queue"},
		{"/repos/acme/infra?tab=locks", "/repos/acme/infra?tab=locks"},
		{"/repos/acme/infra/layers/a%2Fb", "/repos/acme/infra/layers/a%2Fb"},
		{"//evil.example/x", "/"},
		{"https://evil.example/", "/"},
		{"/\\evil.example", "/"},
		{"/%5Cevil.example", "/"},
		{"/\t/evil.example", "/"},
		{"/\t\\evil.example", "/"},
		{"/\n/evil.example", "/"},
		{"/\r\n/evil.example", "/"},
		{"\t//evil.example", "/"},
		{" //evil.example", "/"},
		{"\x00//evil.example", "/"},
		{"/\x00/evil.example", "/"},
		{"/.//evil.example", "/"},
		{"/%2F/evil.example", "/"},
		{"https:evil.example", "/"},
		{"https:/\\evil.example", "/"},
		{"//alice@evil.example/queue", "/"},
	} {
		c := browser(t)
		c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
			if req.URL.Path == "/api/github/auth" && req.URL.Query().Get("code") != "" {
				return http.ErrUseLastResponse // GitHub's way back, followed below by hand
			}
			return nil
		}
		res := signIn(t, c, e.Config.PublicURL+"/api/github/auth?next="+url.QueryEscape(tc.next), "alice")
		res.Body.Close()
		callback, err := http.NewRequest(http.MethodGet, res.Header.Get("Location"), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range c.Jar.Cookies(callback.URL) {
			callback.AddCookie(k)
		}
		// Strata's answer as sent: Go's client would parse its Location
		// (and refuse a tab in it), a browser reads it otherwise.
		back, err := http.DefaultTransport.RoundTrip(callback)
		if err != nil {
			t.Fatal(err)
		}
		back.Body.Close()
		if got := back.Header.Get("Location"); back.StatusCode != http.StatusFound || got != tc.want {
			t.Errorf("next=%q: %d to %q, want 302 to %q", tc.next, back.StatusCode, got, tc.want)
		}
	}
}

// A site the victim visits posts Strata's forms from the victim's logged-in
// browser, even with the CSRF token (from a cached page, a proxy's log):
// the browser says where the post comes from (Sec-Fetch-Site, or Origin
// where it sends no Sec-Fetch-Site) and Strata refuses it. The same posts
// from Strata's own pages go through.
func TestUICrossOriginPostsRefusedEvenWithTheToken(t *testing.T) {
	e := uiEnv(t)
	alice := uiLogin(t, e, "alice")
	alice.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	_, body := fetchPage(t, alice, e.Config.PublicURL+"/")
	m := csrfInput.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF field on alice's page:\n%s", body)
	}
	post := func(path string, header map[string]string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, e.Config.PublicURL+path, strings.NewReader(url.Values{"csrf": {m[1]}}.Encode()))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := alice.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	const unlock, release = "/repos/acme/infra/layers/network/unlock", "/repos/acme/infra/syncs/dev/release"
	for _, tc := range []struct {
		name, path string
		header     map[string]string
		want       int
	}{
		{"unlock from another site", unlock, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"unlock from a sibling subdomain", unlock, map[string]string{"Sec-Fetch-Site": "same-site"}, http.StatusForbidden},
		{"unlock from another site, said by Origin", unlock, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"unlock from another port of Strata's host", unlock, map[string]string{"Origin": "http://" + strings.Split(e.Server.Addr(), ":")[0] + ":1"}, http.StatusForbidden},
		{"unlock from a sandboxed frame", unlock, map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"release from another site", release, map[string]string{"Sec-Fetch-Site": "cross-site", "Origin": "http://evil.example"}, http.StatusForbidden},
		{"logout from another site", "/logout", map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		// Positive controls: nothing holds the lock or the sync, so the
		// page says so (303 to it with a flash).
		{"unlock from Strata's page", unlock, map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": e.Config.PublicURL}, http.StatusSeeOther},
		{"unlock, said by Origin alone", unlock, map[string]string{"Origin": e.Config.PublicURL}, http.StatusSeeOther},
		{"release from Strata's page", release, map[string]string{"Sec-Fetch-Site": "same-origin"}, http.StatusSeeOther},
	} {
		if got := post(tc.path, tc.header); got != tc.want {
			t.Errorf("%s (POST %s with the token, %v): %d, want %d", tc.name, tc.path, tc.header, got, tc.want)
		}
	}
	if _, body := fetchPage(t, alice, e.Config.PublicURL+"/"); !strings.Contains(body, "@alice") {
		t.Fatalf("a refused logout logged alice out:\n%.500s", body)
	}
	if got := post("/logout", map[string]string{"Sec-Fetch-Site": "same-origin"}); got != http.StatusSeeOther {
		t.Errorf("logout from Strata's page: %d, want 303", got)
	}
	if res, _ := fetchPage(t, alice, e.Config.PublicURL+"/"); res.StatusCode != http.StatusFound {
		t.Errorf("still logged in after logout: %d", res.StatusCode)
	}
}

var csrfInput = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

// A form post without the session's CSRF token, as another site makes a
// logged-in browser send, changes nothing; with it, logout works.
func TestUIFormsNeedTheCSRFToken(t *testing.T) {
	e := uiEnv(t)
	alice := uiLogin(t, e, "alice")
	for _, token := range []string{"", "0123456789abcdef0123456789abcdef"} {
		res, err := alice.PostForm(e.Config.PublicURL+"/logout", url.Values{"csrf": {token}})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("logout with csrf %q: %d, want 403", token, res.StatusCode)
		}
	}
	_, body := fetchPage(t, alice, e.Config.PublicURL+"/")
	m := csrfInput.FindStringSubmatch(body)
	if m == nil || !strings.Contains(body, "@alice") {
		t.Fatalf("a refused logout logged alice out, or the page has no CSRF field:\n%s", body)
	}
	res, err := alice.PostForm(e.Config.PublicURL+"/logout", url.Values{"csrf": {m[1]}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Request.URL.Path != "/login" {
		t.Errorf("logout with the token ended on %s", res.Request.URL)
	}
	if res, _ := fetchPage(t, alice, e.Config.PublicURL+"/"); res.Request.URL.Path != "/login" {
		t.Errorf("still logged in after logout: on %s", res.Request.URL)
	}
}

// startRunOf records a running run of repo, as a worker would, and
// returns its id.
func startRunOf(t *testing.T, e *apptest.Env, repo string) string {
	t.Helper()
	r, err := e.Server.Store().StartRun(context.Background(), store.Run{JobID: int64(len(repo)) * 1000, Attempt: 1, Kind: "plan", Repo: repo, PR: 7, Target: "network"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Server.Store().AppendLog(context.Background(), r.ID, "Terraform will perform the following actions in "+repo+"\n"); err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(r.ID, 10)
}

func mustID(t *testing.T, s string) int64 {
	t.Helper()
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// sessionCookie is the session cookie c holds for e's server.
func sessionCookie(t *testing.T, c *http.Client, e *apptest.Env) string {
	t.Helper()
	base, _ := url.Parse(e.Config.PublicURL)
	for _, k := range c.Jar.Cookies(base) {
		if k.Name == "strata_session" {
			return k.Value
		}
	}
	t.Fatal("no session cookie after login")
	return ""
}
