package app

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/google/go-github/v60/github"
	"github.com/rs/zerolog"

	"strata.dev/strata/config"
	"strata.dev/strata/deploy"
)

// setup registers Strata as a GitHub App through GitHub's App manifest flow
// when the server has no App credentials. Whoever completes it owns the
// server's identity, so every step is bound to the operator:
//   - the page opens only with the one-time token the console printed;
//   - it gives that browser a state, which travels through GitHub and comes
//     back in the callback's URL, and a cookie of its own; the callback takes
//     a code only with a state this server issued together with that
//     browser's cookie, so neither a made-up state nor a leaked one will do;
//   - once registered, the token, the states and the routes are gone.
//
// It shows no key or secret, ever: they go straight from GitHub's answer
// into the data dir.
type setup struct {
	cfg   *config.Server
	log   zerolog.Logger
	token string
	done  chan *config.Credentials
	mux   *http.ServeMux

	mu       sync.Mutex
	flows    []flow // begun by browsers that presented the token
	finished bool
}

// flow is one browser's start of the manifest flow: the state is in URLs,
// the browser secret only in that browser's cookie.
type flow struct{ state, browser string }

// browserCookie binds the manifest flow's state to the browser that began it.
const browserCookie = "strata_setup"

func newSetup(cfg *config.Server, log zerolog.Logger) *setup {
	s := &setup{cfg: cfg, log: log, token: randomHex(), done: make(chan *config.Credentials, 1), mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /setup", s.page)
	s.mux.HandleFunc("GET /setup/callback", s.callback)
	return s
}

// randomHex is 128 bits from crypto/rand, which never fails (Go 1.24+).
func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// link is the setup page's address with the token, for the console.
func (s *setup) link(base string) string { return base + "/setup?token=" + s.token }

func (s *setup) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	// The page's URL holds the token: it must not reach GitHub as a Referer
	// when the form is posted there, nor be framed to trick a click.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "frame-ancestors 'none'")
	s.mux.ServeHTTP(w, r)
}

func (s *setup) baseURL(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

// manifest is the App manifest with this server's URLs.
func (s *setup) manifest(base string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(deploy.AppManifest, &m); err != nil {
		return "", err
	}
	m["hook_attributes"] = map[string]any{"url": base + "/api/github/hook", "active": true}
	m["redirect_url"] = base + "/setup/callback"
	m["url"] = base
	out, err := json.Marshal(m)
	return string(out), err
}

// begin checks the token and starts a flow for this browser; false when
// the token is wrong or the App is registered already.
func (s *setup) begin(token string) (flow, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished || !equal(token, s.token) {
		return flow{}, false
	}
	f := flow{state: randomHex(), browser: randomHex()}
	s.flows = append(s.flows, f)
	return f, true
}

// begun reports whether begin issued this state to this browser. The caller
// holds s.mu.
func (s *setup) begun(state, browser string) bool {
	ok := false
	for _, f := range s.flows {
		ok = equal(f.state, state) && equal(f.browser, browser) || ok
	}
	return ok
}

// equal compares secrets in constant time; an empty one never matches.
func equal(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func (s *setup) page(w http.ResponseWriter, r *http.Request) {
	f, ok := s.begin(r.URL.Query().Get("token"))
	if !ok {
		http.Error(w, needToken, http.StatusForbidden)
		return
	}
	base := s.baseURL(r)
	manifest, err := s.manifest(base)
	if err != nil {
		http.Error(w, "manifest: "+err.Error(), http.StatusInternalServerError)
		return
	}
	// Lax, so that the browser sends it on GitHub's redirect back; an hour,
	// as long as GitHub's code lives.
	http.SetCookie(w, &http.Cookie{
		Name: browserCookie, Value: f.browser, Path: "/setup", MaxAge: 3600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(base, "https://"),
	})
	q := "?state=" + url.QueryEscape(f.state)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = setupPage.Execute(w, map[string]string{
		"Web":       s.cfg.GitHub.WebURL,
		"Action":    s.cfg.GitHub.WebURL + "settings/apps/new" + q,
		"OrgAction": s.cfg.GitHub.WebURL + "organizations/ORG/settings/apps/new" + q,
		"Manifest":  manifest,
	})
}

func (s *setup) callback(w http.ResponseWriter, r *http.Request) {
	code, state := r.URL.Query().Get("code"), r.URL.Query().Get("state")
	if code == "" {
		http.Error(w, noCode, http.StatusBadRequest)
		return
	}
	browser := ""
	if c, err := r.Cookie(browserCookie); err == nil {
		browser = c.Value
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		http.Error(w, "Strata is already registered.", http.StatusConflict)
		return
	}
	// A code from anyone's manifest flow would otherwise make their App this
	// server's identity: only the browser that opened the page with the
	// token may finish, with the state this server gave it.
	if !s.begun(state, browser) {
		http.Error(w, notThisBrowser, http.StatusForbidden)
		return
	}
	creds, err := s.convert(r.Context(), code)
	if err != nil {
		s.log.Error().Err(err).Msg("GitHub App manifest conversion failed")
		http.Error(w, "GitHub did not accept the registration code (it is valid for one hour and one use): open the setup URL from the server's log and start again.", http.StatusBadGateway)
		return
	}
	if err := config.SaveCredentials(s.cfg.DataDir, creds); err != nil {
		s.log.Error().Err(err).Msg("store GitHub App credentials")
		http.Error(w, "Strata could not store the App's credentials in its data directory; see the server log.", http.StatusInternalServerError)
		return
	}
	s.finished = true
	s.flows = nil
	s.log.Info().Int64("app_id", creds.AppID).Str("slug", creds.Slug).Msg("registered the GitHub App; credentials stored")
	http.SetCookie(w, &http.Cookie{Name: browserCookie, Path: "/setup", MaxAge: -1})
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = donePage.Execute(w, map[string]string{"Slug": creds.Slug, "Install": creds.HTMLURL + "/installations/new"})
	s.done <- creds
}

// convert exchanges the one-time code for the App's credentials.
func (s *setup) convert(ctx context.Context, code string) (*config.Credentials, error) {
	gh, err := github.NewClient(nil).WithEnterpriseURLs(s.cfg.GitHub.APIURL, s.cfg.GitHub.APIURL)
	if err != nil {
		return nil, err
	}
	app, _, err := gh.Apps.CompleteAppManifest(ctx, code)
	if err != nil {
		return nil, err
	}
	if app.GetID() == 0 || app.GetPEM() == "" || app.GetWebhookSecret() == "" {
		return nil, fmt.Errorf("GitHub's answer lacks the App id, key or webhook secret")
	}
	return &config.Credentials{
		AppID: app.GetID(), Slug: app.GetSlug(), HTMLURL: app.GetHTMLURL(),
		PrivateKey: app.GetPEM(), WebhookSecret: app.GetWebhookSecret(),
		ClientID: app.GetClientID(), ClientSecret: app.GetClientSecret(),
	}, nil
}
