// Package web is Strata's web UI: server-rendered pages of what Strata holds
// (repositories, layers and their locks, runs with their live logs,
// takeovers, releases, the job queue), behind GitHub login. It decides
// nothing itself: which repositories a user sees is GitHub's answer for that
// user, and who may press Unlock or Release is the permission table the
// PR's commands use (worker.Deps.Authorize).
package web

import (
	"embed"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/rs/zerolog"

	"strata.dev/strata/queue"
	"strata.dev/strata/report"
	"strata.dev/strata/version"
	"strata.dev/strata/words"
	"strata.dev/strata/worker"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options are what the UI reads and acts through.
type Options struct {
	// Deps are the workers' own: the store, the config, the installation
	// clients, the permission table and the queue.
	Deps *worker.Deps
	// Queue lists jobs for the queue page.
	Queue *queue.Queue
	// Users makes clients for logged-in users' tokens. It must not share
	// a response cache between users: one user's repositories must never
	// answer another's request.
	Users githubapp.ClientCreator
	Log   zerolog.Logger
	// Now is the time; time.Now when nil.
	Now func() time.Time
	// StateRetention is how many versions of a state a rollback keeps
	// (server config state.retention; the store's default when zero).
	StateRetention int
	// LogPoll is how often a run's event stream reads the run from the
	// store; 300 ms when zero.
	LogPoll time.Duration
}

// UI serves the pages.
type UI struct {
	opts     Options
	mux      *http.ServeMux
	pages    map[string]*template.Template
	sessions *sessions
	repos    *repoCache
	login    http.Handler // nil without the App's OAuth client
	streams  *streams
	xorigin  *http.CrossOriginProtection
}

// New builds the UI. The session key is derived from the webhook secret,
// which every replica shares, so a login holds on all of them.
func New(opts Options) (*UI, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	cfg := opts.Deps.Config
	sess, err := newSessions(cfg.GitHub.WebhookSecret, strings.HasPrefix(cfg.PublicURL, "https://"), opts.Now)
	if err != nil {
		return nil, err
	}
	if opts.LogPoll <= 0 {
		opts.LogPoll = 300 * time.Millisecond
	}
	u := &UI{opts: opts, mux: http.NewServeMux(), sessions: sess, repos: newRepoCache(opts.Now), streams: newStreams(),
		xorigin: crossOrigin(cfg.PublicURL)}
	if u.pages, err = parsePages(); err != nil {
		return nil, err
	}
	if cfg.GitHub.ClientID != "" && cfg.GitHub.ClientSecret != "" {
		u.login = u.oauthHandler()
	}
	u.routes()
	return u, nil
}

func (u *UI) routes() {
	u.mux.Handle("GET /static/", Static())
	u.mux.HandleFunc("GET /login", u.loginPage)
	u.mux.HandleFunc("GET "+loginRoute, u.oauth)
	u.mux.HandleFunc("POST /logout", u.logout)
	u.mux.HandleFunc("GET /{$}", u.reposPage)
	u.pageRoutes()
}

// ServeHTTP serves the UI with headers that keep its pages to themselves:
// no framing, no scripts or styles but its own, no caching of what a
// logged-in user saw.
func (u *UI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	if !strings.HasPrefix(r.URL.Path, "/static/") {
		h.Set("Cache-Control", "no-store")
	}
	if err := u.xorigin.Check(r); err != nil {
		u.refuseCrossOrigin(w, r, err)
		return
	}
	if !public(r.URL.Path) {
		// Logged out, the UI is the login page: whatever a path would
		// show, even whether it exists, is behind a session.
		if _, ok := u.sessions.read(r); !ok {
			u.toLogin(w, r)
			return
		}
	}
	u.mux.ServeHTTP(w, r)
}

// public reports whether a path serves without a session: the login and
// what the login page needs.
func public(p string) bool {
	return p == "/login" || p == loginRoute || p == "/logout" || strings.HasPrefix(p, "/static/")
}

// Page is what every template gets: the page's own data and the layout's.
type Page struct {
	Title  string
	Viewer *Viewer
	// Nav is the top navigation entry to highlight.
	Nav  string
	Data any
	// Flash is a message from the action that led here.
	Flash string
	// Refusal marks Flash as the permission table's refusal of an action.
	Refusal bool
}

// pageFuncs are the functions the layout and the pages call.
var pageFuncs = template.FuncMap{
	"ago":      ago,
	"at":       func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") },
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"duration": duration,
	"count":    words.Count,
	"version":  version.String,
	"short":    report.Short,
	"pathEsc":  url.PathEscape, // one path segment: a layer's name may hold "/"
	"state":    stateName,
}

func parsePages() (map[string]*template.Template, error) {
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, n := range names {
		base := path.Base(n)
		if base == "layout.html" {
			continue
		}
		t, err := template.New("layout.html").Funcs(pageFuncs).ParseFS(templateFS, "templates/layout.html", n)
		if err != nil {
			return nil, err
		}
		pages[strings.TrimSuffix(base, ".html")] = t
	}
	return pages, nil
}

// render writes a page in the layout.
func (u *UI) render(w http.ResponseWriter, status int, name string, p Page) {
	t, ok := u.pages[name]
	if !ok {
		http.Error(w, "no page "+name, http.StatusInternalServerError)
		return
	}
	var b strings.Builder
	if err := t.Execute(&b, p); err != nil {
		u.opts.Log.Error().Err(err).Str("page", name).Msg("render a page")
		http.Error(w, "the page could not be shown; see the server log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(b.String()))
}

// fail shows an error page that says what happened and what to do.
func (u *UI) fail(w http.ResponseWriter, v *Viewer, status int, msg string) {
	u.render(w, status, "error", Page{Title: http.StatusText(status), Viewer: v, Data: msg})
}

// notFound hides what a user may not see behind the same answer as what
// does not exist.
func (u *UI) notFound(w http.ResponseWriter, v *Viewer) {
	u.fail(w, v, http.StatusNotFound, "Nothing here, or nothing you can see: Strata shows only repositories that its GitHub App is installed on and that you can read.")
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	d := time.Since(t)
	if d < -time.Minute {
		return "in " + strings.TrimSuffix(ago(time.Now().Add(d)), " ago")
	}
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%d min ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h ago", int(d.Hours()))
	}
	return fmt.Sprintf("%d days ago", int(d.Hours()/24))
}

func duration(from, to time.Time) string {
	if from.IsZero() {
		return ""
	}
	if to.IsZero() {
		to = time.Now()
	}
	d := to.Sub(from).Round(time.Second)
	if d >= time.Minute {
		d = d.Round(time.Minute) // a run's length to the minute is enough in a table
	}
	return words.Duration(d)
}
