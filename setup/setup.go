// Package setup is the first run of a server without a GitHub App: the
// pages that register Strata as one through GitHub's App manifest flow, in
// the web UI's layout, and the credentials they store. app serves them
// until the registration is done, then builds the rest of the server.
package setup

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/oauth2"
	"github.com/rs/zerolog"

	"strata.dev/strata/config"
	"strata.dev/strata/deploy"
	"strata.dev/strata/version"
)

// Pages register Strata as a GitHub App through GitHub's App manifest flow
// when the server has no App credentials. Whoever completes it owns the
// server's identity, so every step is bound to the operator:
//   - the pages open only with the one-time token the console printed;
//   - the first page asks where GitHub will reach this server (unless
//     STRATA_PUBLIC_URL says) and for which account; the second gives that
//     browser a state, which travels through GitHub and comes back in the
//     callback's URL, and a cookie of its own; the callback takes a code
//     only with a state this server issued together with that browser's
//     cookie, so neither a made-up state nor a leaked one will do;
//   - the public URL the operator confirmed stays with the state on the
//     server: the callback trusts nothing of its request but the code;
//   - once registered, the token, the states and the routes are gone.
//
// It shows no key or secret, ever: they go straight from GitHub's answer
// into the data dir.
type Pages struct {
	cfg   *config.Server
	log   zerolog.Logger
	token string
	// publicURL is the configured one, read once: Run sets cfg.PublicURL
	// after the registration while these pages may still be served.
	publicURL string
	done      chan *config.Credentials
	mux       *http.ServeMux

	mu       sync.Mutex
	flows    []flow // begun by browsers that presented the token
	finished bool
}

// flow is one browser's start of the manifest flow: the state is in URLs,
// the browser secret only in that browser's cookie, the public URL the
// operator confirmed only here.
type flow struct{ state, browser, publicURL string }

// WebhookPath is where GitHub delivers webhooks: the route, and the URL
// the App manifest gives GitHub.
const WebhookPath = "/api/github/hook"

// browserCookie binds the manifest flow's state to the browser that began it.
const browserCookie = "strata_setup"

// The first page's form names its fields; stepCreate asks for the second.
const (
	stepCreate = "create"
	// movedParam marks the one redirect to the public URL's host, so that a
	// proxy that rewrites Host cannot make a loop of it.
	movedParam = "moved"
)

// New makes the setup pages of a server with this config, with a new
// token.
func New(cfg *config.Server, log zerolog.Logger) *Pages {
	s := &Pages{cfg: cfg, log: log, token: randomHex(), publicURL: cfg.PublicURL, done: make(chan *config.Credentials, 1), mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /setup", s.page)
	s.mux.HandleFunc("GET /setup/callback", s.callback)
	// The root URL, which the operator may open first: where the link is.
	s.mux.HandleFunc("GET /{$}", s.waiting)
	return s
}

// randomHex is 128 bits from crypto/rand, which never fails (Go 1.24+).
func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Link is the setup page's address with the token, for the console.
func (s *Pages) Link(base string) string { return base + "/setup?token=" + s.token }

// Done yields the App's credentials once, when the registration stored
// them.
func (s *Pages) Done() <-chan *config.Credentials { return s.done }

func (s *Pages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	// The page's URL holds the token: it must not reach GitHub as a Referer
	// when the form is posted there, nor be framed to trick a click. The
	// pages use the UI's stylesheet and nothing inline.
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	s.mux.ServeHTTP(w, r)
}

// waiting is the root URL's page before the App exists: the setup link is
// in the server's log, never on a page anyone can open.
func (s *Pages) waiting(w http.ResponseWriter, r *http.Request) {
	render(w, http.StatusOK, waitingTemplate, "Set up Strata", nil) // the layout's footer says the version
}

// manifest is the App manifest with this server's URLs.
func (s *Pages) manifest(base string) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(deploy.AppManifest, &m); err != nil {
		return "", err
	}
	m["hook_attributes"] = map[string]any{"url": base + WebhookPath, "active": true}
	m["redirect_url"] = base + "/setup/callback"
	m["url"] = base
	// The web UI's GitHub login uses the App's OAuth client.
	m["callback_urls"] = []string{base + oauth2.DefaultRoute}
	out, err := json.Marshal(m)
	return string(out), err
}

// opens reports whether the token opens the setup pages: it is this
// server's, and the App is not registered yet.
func (s *Pages) opens(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.finished && equal(token, s.token)
}

// begin checks the token and starts a flow for this browser and public
// URL; false when the token is wrong or the App is registered already.
func (s *Pages) begin(token, publicURL string) (flow, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished || !equal(token, s.token) {
		return flow{}, false
	}
	f := flow{state: randomHex(), browser: randomHex(), publicURL: publicURL}
	s.flows = append(s.flows, f)
	return f, true
}

// begun finds the flow begin issued with this state to this browser. The
// caller holds s.mu.
func (s *Pages) begun(state, browser string) (flow, bool) {
	var found flow
	ok := false
	for _, f := range s.flows {
		if equal(f.state, state) && equal(f.browser, browser) {
			found, ok = f, true
		}
	}
	return found, ok
}

// equal compares secrets in constant time; an empty one never matches.
func equal(a, b string) bool {
	return a != "" && subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1
}

func (s *Pages) page(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if !s.opens(q.Get("token")) {
		s.fail(w, http.StatusForbidden, "Setup link needed", needToken)
		return
	}
	if q.Get("step") != stepCreate {
		s.choose(w, r, chooseForm{})
		return
	}
	s.create(w, r)
}

// choose is the first page: where GitHub reaches this server, and which
// account owns the App.
func (s *Pages) choose(w http.ResponseWriter, r *http.Request, f chooseForm) {
	f.Token, f.Web, f.Configured = r.URL.Query().Get("token"), s.cfg.GitHub.WebURL, s.publicURL != ""
	switch {
	case f.Configured:
		f.PublicURL = s.publicURL
	case f.PublicURL == "":
		f.PublicURL = requestURL(r)
	}
	if u, err := parsePublicURL(f.PublicURL); err == nil {
		f.Warning = warn(u, f.Configured, localPort(r))
	}
	status := http.StatusOK
	if f.Error != "" {
		status = http.StatusBadRequest
	}
	render(w, status, chooseTemplate, "Set up Strata", f)
}

// create is the second page: the manifest form, posted to GitHub, for the
// public URL and account the operator chose.
func (s *Pages) create(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	typed, org := q.Get("public_url"), strings.TrimSpace(q.Get("org"))
	public := s.publicURL
	if public == "" {
		var err error
		if public, err = parsePublicURL(typed); err != nil {
			s.choose(w, r, chooseForm{PublicURL: typed, Org: org, Error: fmt.Sprintf(badPublicURL, typed, err)})
			return
		}
	}
	if org != "" && !orgName.MatchString(org) {
		s.choose(w, r, chooseForm{PublicURL: typed, Org: org, Error: fmt.Sprintf(badOrg, org)})
		return
	}
	// GitHub sends the browser back to the public URL: the cookie that binds
	// the flow must be set there, so the flow begins there.
	if hostKey(public) != hostKey(requestURL(r)) && !q.Has(movedParam) {
		q.Set("public_url", public)
		q.Set(movedParam, "1")
		http.Redirect(w, r, public+"/setup?"+q.Encode(), http.StatusSeeOther)
		return
	}
	manifest, err := s.manifest(public)
	if err != nil {
		s.fail(w, http.StatusInternalServerError, "Setup failed", "Strata could not build its App manifest: "+err.Error())
		return
	}
	f, ok := s.begin(q.Get("token"), public)
	if !ok {
		s.fail(w, http.StatusForbidden, "Setup link needed", needToken)
		return
	}
	// Lax, so that the browser sends it on GitHub's redirect back; an hour,
	// as long as GitHub's code lives.
	http.SetCookie(w, &http.Cookie{
		Name: browserCookie, Value: f.browser, Path: setupPath(public), MaxAge: 3600,
		HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: strings.HasPrefix(public, "https://"),
	})
	action := s.cfg.GitHub.WebURL + "settings/apps/new"
	owner := "your personal account"
	if org != "" {
		action = s.cfg.GitHub.WebURL + "organizations/" + url.PathEscape(org) + "/settings/apps/new"
		owner = "the organization " + org
	}
	render(w, http.StatusOK, createTemplate, "Create the GitHub App", createPage{
		PublicURL: public, Owner: owner, Web: s.cfg.GitHub.WebURL, Manifest: manifest,
		Action:  action + "?state=" + url.QueryEscape(f.state),
		Warning: warn(public, s.publicURL != "", localPort(r)),
	})
}

// orgName is what GitHub accepts as an organization's login.
var orgName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,38}$`)

func (s *Pages) callback(w http.ResponseWriter, r *http.Request) {
	code, state := r.URL.Query().Get("code"), r.URL.Query().Get("state")
	if code == "" {
		s.fail(w, http.StatusBadRequest, "Setup failed", noCode)
		return
	}
	browser := ""
	if c, err := r.Cookie(browserCookie); err == nil {
		browser = c.Value
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		s.fail(w, http.StatusConflict, "Already registered", "Strata is already registered.")
		return
	}
	// A code from anyone's manifest flow would otherwise make their App this
	// server's identity: only the browser that opened the page with the
	// token may finish, with the state this server gave it.
	f, ok := s.begun(state, browser)
	if !ok {
		s.fail(w, http.StatusForbidden, "Setup failed", notThisBrowser)
		return
	}
	creds, err := s.convert(r.Context(), code)
	if err != nil {
		s.log.Error().Err(err).Msg("GitHub App manifest conversion failed")
		s.fail(w, http.StatusBadGateway, "Registration failed", s.conversionFailure(err))
		return
	}
	creds.PublicURL = f.publicURL
	if err := config.SaveCredentials(s.cfg.DataDir, creds); err != nil {
		s.log.Error().Err(err).Msg("store GitHub App credentials")
		s.fail(w, http.StatusInternalServerError, "Registration failed", "Strata could not store the App's credentials in its data directory; see the server log.")
		return
	}
	s.finished = true
	s.flows = nil
	s.log.Info().Int64("app_id", creds.AppID).Str("slug", creds.Slug).Str("public_url", creds.PublicURL).Msg("registered the GitHub App; credentials stored")
	http.SetCookie(w, &http.Cookie{Name: browserCookie, Path: setupPath(f.publicURL), MaxAge: -1})
	render(w, http.StatusOK, doneTemplate, "Strata is registered", donePage{
		Slug: creds.Slug, Install: creds.HTMLURL + "/installations/new", PublicURL: f.publicURL,
		Hook: f.publicURL + WebhookPath, Callback: f.publicURL + oauth2.DefaultRoute,
		Login: creds.ClientID != "" && creds.ClientSecret != "",
	})
	s.done <- creds
}

// convertTimeout bounds the conversion, which holds the setup's lock: a
// GitHub that does not answer is reported, not waited for.
const convertTimeout = 30 * time.Second

// convert exchanges the one-time code for the App's credentials.
func (s *Pages) convert(ctx context.Context, code string) (*config.Credentials, error) {
	gh, err := github.NewClient(&http.Client{Timeout: convertTimeout}).WithEnterpriseURLs(s.cfg.GitHub.APIURL, s.cfg.GitHub.APIURL)
	if err != nil {
		return nil, err
	}
	gh.UserAgent = version.UserAgent()
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

// conversionFailure says what went wrong when GitHub was asked for the
// App's credentials: out of reach, refusing the code, or failing.
func (s *Pages) conversionFailure(err error) string {
	api := s.cfg.GitHub.APIURL
	var answer *github.ErrorResponse
	if errors.As(err, &answer) && answer.Response != nil {
		if status := answer.Response.StatusCode; status < 500 {
			return fmt.Sprintf(codeRefused, status)
		}
		return fmt.Sprintf(gitHubFailed, api, answer.Response.StatusCode)
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		// The request's URL holds the code: say only why it failed.
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			err = urlErr.Err
		}
		return fmt.Sprintf(gitHubUnreachable, api, err)
	}
	return fmt.Sprintf(gitHubAnsweredWrong, api, err)
}

// setupPath is the setup pages' path as the browser sees it: behind a
// proxy that serves Strata under a prefix, the prefix comes first.
func setupPath(publicURL string) string {
	u, err := url.Parse(publicURL)
	if err != nil {
		return "/setup"
	}
	return u.Path + "/setup"
}
