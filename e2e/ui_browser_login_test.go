package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"strata.dev/strata/browsertest"
)

// In a real browser: an attacker sends the victim a login link whose next
// Chromium reads as the attacker's origin (a tab inside "//" or "/\", which
// the URL parser drops), and the victim logs in. The browser ends on
// Strata's repository list, never on the attacker's page; a link to a
// page of Strata still comes back to it.
func TestBrowserLoginLinkStaysOnStrata(t *testing.T) {
	e := uiEnv(t)
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<!doctype html><title>evil</title><h1 id="evil">the attacker's page</h1>`)
	}))
	t.Cleanup(evil.Close)
	attacker := strings.TrimPrefix(evil.URL, "http://")
	strata := strings.TrimPrefix(e.Config.PublicURL, "http://")
	b := browsertest.Start(t)
	for _, tc := range []struct{ next, want string }{
		{"/\t/" + attacker + "/", "/"},
		{"/\t\\" + attacker + "/", "/"},
		{"/queue", "/queue"}, // positive control
	} {
		tab := openUI(t, b, e)
		tab.open("/login?next="+url.QueryEscape(tc.next), "a#login")
		tab.Do(
			chromedp.Click(chromedp.CSS("a#login")),
			chromedp.WaitVisible(chromedp.CSS("button#authorize")),
			chromedp.SendKeys(chromedp.CSS("input#login"), "alice"),
			chromedp.Click(chromedp.CSS("button#authorize")),
		)
		tab.Until("Strata's page or the attacker's", `document.querySelector("header .who .login") !== null || location.host === `+strconv.Quote(attacker))
		got, err := url.Parse(tab.Location())
		if err != nil {
			t.Fatal(err)
		}
		if got.Host != strata || got.Path != tc.want {
			t.Errorf("next=%q: the browser ended on %s, want %s on Strata (%s)", tc.next, got, tc.want, strata)
		}
	}
}
