package setup

import (
	"encoding/json"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"strata.dev/strata/config"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/version"
)

func newTestSetup(publicURL string) *Pages {
	return New(&config.Server{PublicURL: publicURL, GitHub: config.GitHub{WebURL: "https://github.example/"}}, zerolog.Nop())
}

// serve sends a GET to the setup pages; an absolute target says which host
// (and, with https, TLS) the browser reached the server at.
func serve(s *Pages, target string, cookie *http.Cookie, header ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// createURL is the second step as the first page's form submits it, at the
// host of the chosen public URL.
func createURL(s *Pages, publicURL, org string) string {
	q := url.Values{"token": {s.token}, "step": {stepCreate}, "public_url": {publicURL}, "org": {org}}
	return strings.TrimSuffix(publicURL, "/") + "/setup?" + q.Encode()
}

// The token is 128 random bits, new for every server.
func TestSetupTokenIsRandom(t *testing.T) {
	a, b := newTestSetup(""), newTestSetup("")
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(a.token) || a.token == b.token {
		t.Fatalf("tokens %q and %q: want 32 hex digits, different each time", a.token, b.token)
	}
	if got := a.Link("https://strata.example"); got != "https://strata.example/setup?token="+a.token {
		t.Fatalf("link = %q", got)
	}
}

// Without the token, or with a wrong one, there is no form and no cookie,
// at either step.
func TestSetupPageNeedsTheToken(t *testing.T) {
	s := newTestSetup("")
	for _, token := range []string{"", strings.Repeat("0", 32), s.token[:31]} {
		for _, target := range []string{"/setup?token=" + token, "/setup?step=create&public_url=http%3A%2F%2Fexample.com&token=" + token} {
			rec := serve(s, target, nil)
			if rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), "<form") || rec.Header().Get("Set-Cookie") != "" {
				t.Errorf("GET %s: %d, Set-Cookie %q:\n%s", target, rec.Code, rec.Header().Get("Set-Cookie"), rec.Body)
			}
		}
	}
	if rec := serve(s, "/setup", nil); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), "/static/strata.css") {
		t.Errorf("GET /setup: %d, want a refusal in the UI's look:\n%s", rec.Code, rec.Body)
	}
}

// Without STRATA_PUBLIC_URL, the first page asks where GitHub will reach
// the server, prefilled with the address the browser (or the proxy in
// front) used. It starts no flow: no cookie yet.
func TestSetupPageAsksForThePublicURL(t *testing.T) {
	s := newTestSetup("")
	for _, c := range []struct {
		target  string
		headers []string
		want    string
	}{
		{"http://strata.lan:8080/setup?token=" + s.token, nil, "http://strata.lan:8080"},
		{"https://Strata.Example.com/setup?token=" + s.token, nil, "https://strata.example.com"},
		{"http://localhost:8080/setup?token=" + s.token, []string{"X-Forwarded-Proto", "https", "X-Forwarded-Host", "abc.trycloudflare.com"}, "https://abc.trycloudflare.com"},
	} {
		rec := serve(s, c.target, nil, c.headers...)
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, `id="public-url"`) || !strings.Contains(body, `name="public_url" value="`+c.want+`"`) {
			t.Errorf("%s %v: %d, want the URL field prefilled with %s:\n%s", c.target, c.headers, rec.Code, c.want, body)
		}
		if rec.Header().Get("Set-Cookie") != "" || strings.Contains(body, "manifest") {
			t.Errorf("%s: the first page starts a flow", c.target)
		}
	}
	// With STRATA_PUBLIC_URL, it is not asked.
	s = newTestSetup("https://strata.example.com")
	rec := serve(s, "https://strata.example.com/setup?token="+s.token, nil)
	if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `id="public-url"`) || !strings.Contains(rec.Body.String(), "https://strata.example.com") {
		t.Errorf("with STRATA_PUBLIC_URL: %d\n%s", rec.Code, rec.Body)
	}
}

// An address GitHub cannot reach, or reaches without encryption, gets a
// warning that says what to do instead.
func TestSetupWarnsWhenGitHubCannotReachTheURL(t *testing.T) {
	s := newTestSetup("")
	for _, c := range []struct {
		url  string
		want []string // in the warning; none: no warning
	}{
		{"http://127.0.0.1:8080", []string{"loopback", "cloudflared tunnel --url http://localhost:", "ngrok http ", "STRATA_PUBLIC_URL"}},
		{"http://10.0.0.5", []string{"private address", "cloudflared"}},
		{"https://192.168.1.10", []string{"private address"}},
		{"http://[::1]:8080", []string{"loopback"}},
		{"https://[fd00::1]", []string{"private address"}},
		{"http://169.254.1.1", []string{"link-local"}},
		{"http://strata", []string{"without a domain"}},
		{"https://localhost:8443", []string{"only this machine"}},
		{"http://strata.example.com", []string{"unencrypted"}},
		{"https://strata.example.com", nil},
		{"https://203.0.113.7", nil},
	} {
		u, _ := url.Parse(c.url)
		scheme := "http"
		if u.Scheme == "https" {
			scheme = "https"
		}
		// The first page, prefilled from the request.
		first := serve(s, "http://"+u.Host+"/setup?token="+s.token, nil, "X-Forwarded-Proto", scheme).Body.String()
		// The second, for the URL chosen.
		second := serve(s, createURL(s, c.url, ""), nil).Body.String()
		for name, body := range map[string]string{"first page": first, "second page": second} {
			warning := regexp.MustCompile(`(?s)<div class="warning" id="url-warning".*?</div>`).FindString(body)
			if c.want == nil && warning != "" {
				t.Errorf("%s, %s: warns:\n%s", c.url, name, warning)
			}
			for _, w := range c.want {
				if !strings.Contains(warning, w) {
					t.Errorf("%s, %s: the warning lacks %q:\n%s", c.url, name, w, body)
				}
			}
		}
	}
}

// A URL that is not an absolute http(s) address of a host, or that carries
// a user, a query or a fragment, is refused with the reason, and the
// operator may correct it; no flow starts.
func TestSetupRefusesABadPublicURL(t *testing.T) {
	s := newTestSetup("")
	for bad, why := range map[string]string{
		"javascript:alert(1)":                 "must start with https://",
		"ftp://strata.example.com":            "must start with https://",
		"https://admin:pw@strata.example.com": "user name or password",
		"https://strata.example.com/?x=1":     "query",
		"https://strata.example.com/#top":     "fragment",
		"https:///setup":                      "names no host",
		"":                                    "it is empty",
		"strata.example.com":                  "must start with https://",
	} {
		q := url.Values{"token": {s.token}, "step": {stepCreate}, "public_url": {bad}}
		rec := serve(s, "http://strata.example.com/setup?"+q.Encode(), nil)
		body := html.UnescapeString(rec.Body.String())
		if rec.Code != http.StatusBadRequest || !strings.Contains(body, "cannot use") || !strings.Contains(body, why) {
			t.Errorf("%q: %d, want 400 saying %q:\n%s", bad, rec.Code, why, body)
		}
		if rec.Header().Get("Set-Cookie") != "" || strings.Contains(body, `name="manifest"`) || !strings.Contains(body, `id="public-url"`) {
			t.Errorf("%q: a flow started, or no field to correct it:\n%s", bad, body)
		}
	}
	q := url.Values{"token": {s.token}, "step": {stepCreate}, "public_url": {"https://strata.example.com"}, "org": {"acme/../x"}}
	if rec := serve(s, "https://strata.example.com/setup?"+q.Encode(), nil); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "organization") {
		t.Errorf("a bad organization name: %d\n%s", rec.Code, rec.Body)
	}
}

// The manifest GitHub gets carries the URL the operator chose: webhooks,
// the redirect back, the homepage and the UI's login callback. An
// organization gets the App on its own settings page.
func TestSetupManifestCarriesTheChosenURL(t *testing.T) {
	s := newTestSetup("")
	rec := serve(s, createURL(s, "https://strata.example.com/", "acme-corp"), nil)
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("%d\n%s", rec.Code, body)
	}
	m := regexp.MustCompile(`name="manifest" value="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no manifest:\n%s", body)
	}
	var manifest struct {
		URL            string   `json:"url"`
		RedirectURL    string   `json:"redirect_url"`
		CallbackURLs   []string `json:"callback_urls"`
		RequestOAuth   *bool    `json:"request_oauth_on_install"`
		HookAttributes struct {
			URL    string `json:"url"`
			Active bool   `json:"active"`
		} `json:"hook_attributes"`
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &manifest); err != nil {
		t.Fatal(err)
	}
	if manifest.URL != "https://strata.example.com" || manifest.RedirectURL != "https://strata.example.com/setup/callback" ||
		manifest.HookAttributes.URL != "https://strata.example.com/api/github/hook" || !manifest.HookAttributes.Active ||
		len(manifest.CallbackURLs) != 1 || manifest.CallbackURLs[0] != "https://strata.example.com/api/github/auth" ||
		manifest.RequestOAuth == nil || *manifest.RequestOAuth {
		t.Errorf("manifest = %+v", manifest)
	}
	if !strings.Contains(body, `action="https://github.example/organizations/acme-corp/settings/apps/new?state=`) {
		t.Errorf("the form does not post to the organization's page:\n%s", body)
	}
	if strings.Contains(body, "<script") || strings.Contains(body, "style=") || strings.Contains(body, "onclick") {
		t.Errorf("inline script or style, which the CSP blocks:\n%s", body)
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("CSP %q", csp)
	}
}

// GitHub sends the browser back to the public URL, where the cookie that
// binds the flow must be: a browser on another address (localhost, before
// a tunnel) is sent on to the public URL once, and the flow begins there.
func TestSetupContinuesAtThePublicURL(t *testing.T) {
	s := newTestSetup("")
	q := url.Values{"token": {s.token}, "step": {stepCreate}, "public_url": {"https://abc.trycloudflare.com"}}
	rec := serve(s, "http://localhost:8080/setup?"+q.Encode(), nil)
	loc, _ := url.Parse(rec.Header().Get("Location"))
	if rec.Code != http.StatusSeeOther || loc == nil || loc.Host != "abc.trycloudflare.com" || loc.Scheme != "https" ||
		loc.Query().Get("token") != s.token || loc.Query().Get(movedParam) == "" || rec.Header().Get("Set-Cookie") != "" {
		t.Fatalf("at localhost: %d, Location %q, Set-Cookie %q", rec.Code, rec.Header().Get("Location"), rec.Header().Get("Set-Cookie"))
	}
	// Through the tunnel, Host says the public name; a proxy that rewrites
	// it gets the page anyway rather than a loop.
	for _, target := range []string{loc.String(), "http://localhost:8080" + loc.RequestURI()} {
		rec = serve(s, target, nil)
		if rec.Code != http.StatusOK || len(rec.Result().Cookies()) != 1 || !strings.Contains(rec.Body.String(), `name="manifest"`) {
			t.Errorf("at %s: %d, cookies %v", target, rec.Code, rec.Result().Cookies())
		}
	}
}

// With the token, the browser gets the form and a cookie that scripts
// cannot read, that GitHub's redirect back carries, and that is Secure when
// the server is reached over https. The page's URL (with the token) is not
// sent on as a Referer.
func TestSetupPageBindsTheBrowser(t *testing.T) {
	for _, c := range []struct {
		configured, chosen string
		secure             bool
	}{{"", "http://strata.internal:8080", false}, {"", "https://strata.example", true}, {"http://strata.internal:8080", "", false}, {"https://strata.example", "", true}} {
		s := newTestSetup(c.configured)
		target := createURL(s, c.chosen, "")
		if c.configured != "" {
			target = c.configured + "/setup?token=" + s.token + "&step=create"
		}
		rec := serve(s, target, nil)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `name="manifest"`) {
			t.Fatalf("%s: GET with the token: %d\n%s", target, rec.Code, rec.Body)
		}
		cookies := rec.Result().Cookies()
		if len(cookies) != 1 {
			t.Fatalf("%s: cookies %v, want one", target, cookies)
		}
		ck := cookies[0]
		if ck.Name != browserCookie || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != c.secure || ck.Path != "/setup" {
			t.Errorf("%s: cookie %+v: want HttpOnly, SameSite=Lax, Path=/setup, Secure=%v", target, ck, c.secure)
		}
		if strings.Contains(rec.Body.String(), ck.Value) || strings.Contains(rec.Body.String(), s.token) {
			t.Errorf("%s: the page shows the browser's cookie or the token", target)
		}
		if got := rec.Header().Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("%s: Referrer-Policy %q, want no-referrer", target, got)
		}
	}
}

// The callback takes a code only with a state this server issued together
// with the cookie of the browser it was issued to. Refused before GitHub is
// asked, so no code, even a real one of someone else's App, is converted.
func TestSetupCallbackNeedsTheBrowsersCookie(t *testing.T) {
	s := newTestSetup("")
	first := serve(s, createURL(s, "http://example.com", ""), nil)
	second := serve(s, createURL(s, "http://example.com", ""), nil)
	state := regexp.MustCompile(`state=([0-9a-f]{32})`).FindStringSubmatch(first.Body.String())[1]
	mine, other := first.Result().Cookies()[0], second.Result().Cookies()[0]
	forged := &http.Cookie{Name: browserCookie, Value: state}
	for _, c := range []struct {
		name   string
		target string
		cookie *http.Cookie
		want   int
	}{
		{"no code", "/setup/callback?state=" + state, mine, http.StatusBadRequest},
		{"no state, no cookie", "/setup/callback?code=c", nil, http.StatusForbidden},
		{"made-up state", "/setup/callback?code=c&state=" + strings.Repeat("a", 32), mine, http.StatusForbidden},
		{"state, no cookie", "/setup/callback?code=c&state=" + state, nil, http.StatusForbidden},
		{"state, cookie set to the state", "/setup/callback?code=c&state=" + state, forged, http.StatusForbidden},
		{"state, another browser's cookie", "/setup/callback?code=c&state=" + state, other, http.StatusForbidden},
	} {
		if rec := serve(s, c.target, c.cookie); rec.Code != c.want {
			t.Errorf("%s: %d, want %d: %s", c.name, rec.Code, c.want, rec.Body)
		}
	}
}

// Once registered, the token opens nothing, even before the routes go.
func TestSetupTokenDiesWithTheRegistration(t *testing.T) {
	s := newTestSetup("")
	s.finished = true
	for _, target := range []string{"/setup?token=" + s.token, createURL(s, "http://example.com", "")} {
		if rec := serve(s, target, nil); rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), "<form") {
			t.Fatalf("GET %s after registration: %d\n%s", target, rec.Code, rec.Body)
		}
	}
}

// begin opens a flow at publicURL and returns the callback's state and the
// browser's cookie.
func begin(t *testing.T, s *Pages, publicURL string) (string, *http.Cookie) {
	t.Helper()
	rec := serve(s, createURL(s, publicURL, ""), nil)
	m := regexp.MustCompile(`state=([0-9a-f]{32})`).FindStringSubmatch(rec.Body.String())
	if rec.Code != http.StatusOK || m == nil {
		t.Fatalf("second step: %d\n%s", rec.Code, rec.Body)
	}
	return m[1], rec.Result().Cookies()[0]
}

// When the registration fails, the page says whose fault it was: GitHub out
// of reach (the server's network), GitHub refusing the code (start again),
// or GitHub failing.
func TestSetupSaysWhyRegistrationFailed(t *testing.T) {
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	unreachable := "http://" + closed.Addr().String() + "/api/v3/"
	closed.Close()
	gh := githubtest.NewServer(t)
	gh.FailNext("POST", "/app-manifests/", http.StatusBadGateway)
	for _, c := range []struct {
		name, api string
		want      []string
	}{
		{"GitHub failing", gh.APIURL(), []string{"GitHub at " + gh.APIURL() + " failed to convert the registration code (HTTP 502)"}},
		{"unreachable", unreachable, []string{"Strata could not reach GitHub at " + unreachable + ": ", "connection refused", "STRATA_GITHUB_API_URL"}},
		{"refused", gh.APIURL(), []string{"GitHub refused the registration code (HTTP 404)", "one hour and one use"}},
	} {
		s := New(&config.Server{DataDir: t.TempDir(), GitHub: config.GitHub{APIURL: c.api, WebURL: gh.WebURL()}}, zerolog.Nop())
		state, cookie := begin(t, s, "http://example.com")
		rec := serve(s, "http://example.com/setup/callback?code=expired-code&state="+state, cookie)
		body := html.UnescapeString(rec.Body.String())
		if rec.Code != http.StatusBadGateway {
			t.Errorf("%s: %d, want 502", c.name, rec.Code)
		}
		for _, w := range c.want {
			if !strings.Contains(body, w) {
				t.Errorf("%s: the page lacks %q:\n%s", c.name, w, body)
			}
		}
		if strings.Contains(body, "expired-code") {
			t.Errorf("%s: the page shows the code:\n%s", c.name, body)
		}
	}
}

// Registered: the credentials are stored with the chosen public URL, and
// the page says how to install the App, where webhooks arrive and where
// the UI is.
func TestSetupDoneSaysHowToInstall(t *testing.T) {
	gh := githubtest.NewServer(t)
	gh.AddManifestCode("one-time-code")
	dir := t.TempDir()
	s := New(&config.Server{DataDir: dir, GitHub: config.GitHub{APIURL: gh.APIURL(), WebURL: gh.WebURL()}}, zerolog.Nop())
	state, cookie := begin(t, s, "https://strata.example.com")
	rec := serve(s, "https://strata.example.com/setup/callback?code=one-time-code&state="+state, cookie)
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("%d\n%s", rec.Code, body)
	}
	for _, want := range []string{
		`id="install" href="` + gh.WebURL() + `apps/strata-test/installations/new"`,
		"https://strata.example.com/api/github/hook", `href="https://strata.example.com/"`,
		"OAuth client is configured", "https://strata.example.com/api/github/auth",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the done page lacks %q:\n%s", want, body)
		}
	}
	creds, err := config.LoadCredentials(dir)
	if err != nil || creds.PublicURL != "https://strata.example.com" {
		t.Fatalf("stored credentials %+v, %v: want the chosen public URL", creds, err)
	}
	if got := <-s.done; got.PublicURL != "https://strata.example.com" {
		t.Errorf("handed on %+v", got)
	}
}

// The setup pages are the web UI's layout (web.Layout), not a copy of it:
// its stylesheet, header and footer, and no script, which the setup's CSP
// would refuse.
func TestSetupPagesAreInTheUILayout(t *testing.T) {
	s := newTestSetup("")
	for _, target := range []string{"/", "/setup?token=" + s.token, "/setup"} {
		body := serve(s, target, nil).Body.String()
		for _, want := range []string{`<link rel="stylesheet" href="/static/strata.css">`, `<header class="top">`,
			`<footer class="foot">Strata ` + version.String() + `</footer>`} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %q:\n%s", target, want, body)
			}
		}
		if strings.Contains(body, "<script") || strings.Contains(body, "<nav>") {
			t.Errorf("%s has a script or the UI's navigation:\n%s", target, body)
		}
	}
}
