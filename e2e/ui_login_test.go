package e2e

import (
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
)

// browser is an HTTP client with cookies, as a browser of the web UI: it
// follows redirects, between Strata and the fake GitHub's web pages too.
func browser(t *testing.T) *http.Client {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar}
}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`)

// uiLogin logs login in to the web UI of e, through GitHub's web flow as
// the fake serves it: Strata's login route, the fake's sign-in page (its
// form posted with the login), GitHub's redirect back with the code, and
// Strata's session. It returns the browser, on the repository list.
func uiLogin(t *testing.T, e *apptest.Env, login string) *http.Client {
	t.Helper()
	c := browser(t)
	res := signIn(t, c, e.Config.PublicURL+"/api/github/auth", login)
	page := readAll(t, res)
	if res.StatusCode != http.StatusOK || !strings.Contains(page, `id="repos"`) && !strings.Contains(page, "You can see no repository") {
		t.Fatalf("after signing in as %s: %d at %s: %.500s", login, res.StatusCode, res.Request.URL, page)
	}
	return c
}

// signIn begins a login at start (Strata's login route) with c, signs in
// on the fake GitHub's page as login, and returns the answer to that form,
// as far as c follows redirects.
func signIn(t *testing.T, c *http.Client, start, login string) *http.Response {
	t.Helper()
	res, body := fetchPage(t, c, start)
	if !strings.Contains(body, `id="authorize"`) {
		t.Fatalf("login did not reach GitHub's sign-in page (%s): %.300s", res.Request.URL, body)
	}
	form := url.Values{"login": {login}}
	for _, m := range hiddenField.FindAllStringSubmatch(body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	signIn := *res.Request.URL
	signIn.RawQuery = ""
	res, err := c.PostForm(signIn.String(), form)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func fetchPage(t *testing.T, c *http.Client, u string) (*http.Response, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	return res, readAll(t, res)
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
