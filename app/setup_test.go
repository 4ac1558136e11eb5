package app

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"strata.dev/strata/config"
)

func newTestSetup(publicURL string) *setup {
	return newSetup(&config.Server{PublicURL: publicURL, GitHub: config.GitHub{WebURL: "https://github.example/"}}, zerolog.Nop())
}

func serve(s *setup, target string, cookie *http.Cookie) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, target, nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	return rec
}

// The token is 128 random bits, new for every server.
func TestSetupTokenIsRandom(t *testing.T) {
	a, b := newTestSetup(""), newTestSetup("")
	if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(a.token) || a.token == b.token {
		t.Fatalf("tokens %q and %q: want 32 hex digits, different each time", a.token, b.token)
	}
	if got := a.link("https://strata.example"); got != "https://strata.example/setup?token="+a.token {
		t.Fatalf("link = %q", got)
	}
}

// Without the token, or with a wrong one, there is no form and no cookie.
func TestSetupPageNeedsTheToken(t *testing.T) {
	s := newTestSetup("")
	for _, target := range []string{"/setup", "/setup?token=", "/setup?token=" + strings.Repeat("0", 32), "/setup?token=" + s.token[:31]} {
		rec := serve(s, target, nil)
		if rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), "<form") || rec.Header().Get("Set-Cookie") != "" {
			t.Errorf("GET %s: %d, Set-Cookie %q:\n%s", target, rec.Code, rec.Header().Get("Set-Cookie"), rec.Body)
		}
	}
}

// With the token, the browser gets the form and a cookie that scripts
// cannot read, that GitHub's redirect back carries, and that is Secure when
// the server is reached over https. The page's URL (with the token) is not
// sent on as a Referer.
func TestSetupPageBindsTheBrowser(t *testing.T) {
	for _, c := range []struct {
		publicURL string
		secure    bool
	}{{"", false}, {"http://strata.internal:8080", false}, {"https://strata.example", true}} {
		s := newTestSetup(c.publicURL)
		rec := serve(s, "/setup?token="+s.token, nil)
		if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "<form") {
			t.Fatalf("%s: GET with the token: %d\n%s", c.publicURL, rec.Code, rec.Body)
		}
		cookies := rec.Result().Cookies()
		if len(cookies) != 1 {
			t.Fatalf("%s: cookies %v, want one", c.publicURL, cookies)
		}
		ck := cookies[0]
		if ck.Name != browserCookie || !ck.HttpOnly || ck.SameSite != http.SameSiteLaxMode || ck.Secure != c.secure || ck.Path != "/setup" {
			t.Errorf("%s: cookie %+v: want HttpOnly, SameSite=Lax, Path=/setup, Secure=%v", c.publicURL, ck, c.secure)
		}
		if strings.Contains(rec.Body.String(), ck.Value) || strings.Contains(rec.Body.String(), s.token) {
			t.Errorf("%s: the page shows the browser's cookie or the token", c.publicURL)
		}
		if got := rec.Header().Get("Referrer-Policy"); got != "no-referrer" {
			t.Errorf("%s: Referrer-Policy %q, want no-referrer", c.publicURL, got)
		}
	}
}

// The callback takes a code only with a state this server issued together
// with the cookie of the browser it was issued to. Refused before GitHub is
// asked, so no code, even a real one of someone else's App, is converted.
func TestSetupCallbackNeedsTheBrowsersCookie(t *testing.T) {
	s := newTestSetup("")
	first := serve(s, "/setup?token="+s.token, nil)
	second := serve(s, "/setup?token="+s.token, nil)
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
	if rec := serve(s, "/setup?token="+s.token, nil); rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), "<form") {
		t.Fatalf("GET with the token after registration: %d\n%s", rec.Code, rec.Body)
	}
}
