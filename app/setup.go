package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sync"

	"github.com/google/go-github/v60/github"
	"github.com/rs/zerolog"

	"strata.dev/strata/config"
	"strata.dev/strata/deploy"
)

// setup registers Strata as a GitHub App through GitHub's App manifest flow
// when the server has no App credentials. It shows no key or secret, ever:
// they go straight from GitHub's answer into the data dir.
type setup struct {
	cfg   *config.Server
	log   zerolog.Logger
	state string
	done  chan *config.Credentials

	mux      *http.ServeMux
	mu       sync.Mutex
	finished bool
}

func newSetup(cfg *config.Server, log zerolog.Logger) *setup {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	s := &setup{cfg: cfg, log: log, state: hex.EncodeToString(b), done: make(chan *config.Credentials, 1), mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /setup", s.page)
	s.mux.HandleFunc("GET /setup/callback", s.callback)
	return s
}

func (s *setup) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

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

var setupPage = template.Must(template.New("setup").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Set up Strata</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>Set up Strata</h1>
<p>Strata has no GitHub App yet. Register one on {{.Web}}: GitHub creates it with the
permissions and events Strata needs, then sends you back here.</p>
<form action="{{.Action}}" method="post">
<input type="hidden" name="manifest" value="{{.Manifest}}">
<p><label>Organization (empty for your personal account): <input name="org" id="org"></label></p>
<button type="submit" onclick="var o=document.getElementById('org').value; if(o){this.form.action={{.OrgAction}}.replace('ORG', encodeURIComponent(o));}">Create the GitHub App</button>
</form>
</body></html>`))

func (s *setup) page(w http.ResponseWriter, r *http.Request) {
	manifest, err := s.manifest(s.baseURL(r))
	if err != nil {
		http.Error(w, "manifest: "+err.Error(), http.StatusInternalServerError)
		return
	}
	q := "?state=" + url.QueryEscape(s.state)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_ = setupPage.Execute(w, map[string]string{
		"Web":       s.cfg.GitHub.WebURL,
		"Action":    s.cfg.GitHub.WebURL + "settings/apps/new" + q,
		"OrgAction": s.cfg.GitHub.WebURL + "organizations/ORG/settings/apps/new" + q,
		"Manifest":  manifest,
	})
}

var donePage = template.Must(template.New("done").Parse(`<!doctype html>
<html><head><meta charset="utf-8"><title>Strata is registered</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 3em auto">
<h1>Strata is registered as {{.Slug}}</h1>
<p>Its credentials are stored in the server's data directory. Next,
<a href="{{.Install}}">install the App</a> on the repositories Strata should work on.</p>
</body></html>`))

func (s *setup) callback(w http.ResponseWriter, r *http.Request) {
	code, state := r.URL.Query().Get("code"), r.URL.Query().Get("state")
	if code == "" || state != s.state {
		http.Error(w, "This link is not from the setup page of this server: open /setup and start again.", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.finished {
		http.Error(w, "Strata is already registered.", http.StatusConflict)
		return
	}
	creds, err := s.convert(r.Context(), code)
	if err != nil {
		s.log.Error().Err(err).Msg("GitHub App manifest conversion failed")
		http.Error(w, "GitHub did not accept the registration code (it is valid for one hour and one use): open /setup and start again.", http.StatusBadGateway)
		return
	}
	if err := config.SaveCredentials(s.cfg.DataDir, creds); err != nil {
		s.log.Error().Err(err).Msg("store GitHub App credentials")
		http.Error(w, "Strata could not store the App's credentials in its data directory; see the server log.", http.StatusInternalServerError)
		return
	}
	s.finished = true
	s.log.Info().Int64("app_id", creds.AppID).Str("slug", creds.Slug).Msg("registered the GitHub App; credentials stored")
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
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
