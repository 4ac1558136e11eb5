package web

import (
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/palantir/go-githubapp/oauth2"
)

// loginRoute is where GitHub sends the user back with the code:
// go-githubapp's default, which the App's callback URL names.
const loginRoute = oauth2.DefaultRoute

// stateCookie binds the OAuth state to the browser that began the login,
// with the page to return to after it.
const stateCookie = "strata_login"

// oauthHandler is go-githubapp's login handler with the App's client:
// GitHub asks the user, sends a code back, the handler trades it for the
// user's token, and onLogin starts the session.
func (u *UI) oauthHandler() http.Handler {
	cfg := u.opts.Deps.Config
	var app githubapp.Config
	app.WebURL = cfg.GitHub.WebURL
	app.OAuth.ClientID, app.OAuth.ClientSecret = cfg.GitHub.ClientID, cfg.GitHub.ClientSecret
	conf := oauth2.GetConfig(app, nil)
	params := []oauth2.Param{
		oauth2.WithStore(&stateStore{secure: u.sessions.secure, back: u.returnPath}),
		oauth2.OnLogin(u.onLogin),
		oauth2.OnError(u.onLoginError),
	}
	if cfg.PublicURL != "" {
		// Behind a proxy the request's Host may not be the public one.
		params = append(params, oauth2.WithRedirectURL(cfg.PublicURL+loginRoute))
	}
	return oauth2.NewHandler(conf, params...)
}

func (u *UI) oauth(w http.ResponseWriter, r *http.Request) {
	if u.login == nil {
		u.loginPage(w, r)
		return
	}
	u.login.ServeHTTP(w, r)
}

func (u *UI) onLogin(w http.ResponseWriter, r *http.Request, login *oauth2.Login) {
	gh, err := u.opts.Users.NewTokenClient(login.Token.AccessToken)
	if err == nil {
		user, _, uerr := gh.Users.Get(r.Context(), "")
		if uerr == nil && user.GetLogin() != "" {
			u.sessions.start(w, user.GetLogin(), login.Token.AccessToken)
			u.opts.Log.Info().Str("user", user.GetLogin()).Msg("logged in to the web UI")
			http.Redirect(w, r, u.returnPath(nextOf(r)), http.StatusFound)
			return
		}
		err = uerr
	}
	u.opts.Log.Warn().Err(err).Msg("web UI login: GitHub did not say who logged in")
	u.render(w, http.StatusBadGateway, "login", Page{Title: "Log in", Data: loginData{
		Enabled: true, Error: "GitHub did not say who you are (" + u.opts.Deps.Config.GitHub.APIURL + "user). Try again; if it persists, the server log says more."}})
}

func (u *UI) onLoginError(w http.ResponseWriter, r *http.Request, err error) {
	msg := "GitHub did not log you in: " + err.Error() + ". Try again."
	var le oauth2.LoginError
	switch {
	case errors.Is(err, oauth2.ErrInvalidState):
		msg = "This login did not start in this browser, or took too long. Log in again."
	case errors.As(err, &le) && string(le) == "access_denied":
		msg = "You did not authorize Strata on GitHub, so it cannot tell who you are."
	}
	u.opts.Log.Info().Err(err).Msg("web UI login failed")
	u.render(w, http.StatusForbidden, "login", Page{Title: "Log in", Data: loginData{Enabled: true, Error: msg}})
}

type loginData struct {
	Enabled bool
	Next    string
	Error   string
}

func (u *UI) loginPage(w http.ResponseWriter, r *http.Request) {
	u.render(w, http.StatusOK, "login", Page{Title: "Log in", Data: loginData{Enabled: u.login != nil, Next: u.returnPath(r.URL.Query().Get("next"))}})
}

func (u *UI) logout(w http.ResponseWriter, r *http.Request) {
	sess, ok := u.sessions.read(r)
	if ok && !checkCSRF(r, sess) {
		u.fail(w, nil, http.StatusForbidden, "This form was not sent from Strata's page. Reload the page and try again.")
		return
	}
	if ok {
		u.repos.forget(sess.Token)
	}
	u.sessions.end(w)
	http.Redirect(w, r, "/login", http.StatusSeeOther)
}

// returnPath is the page of this UI a login goes back to, from next (a
// login link's parameter, anyone's to write): next parsed as a URL, and
// only its path and query kept and written again, when that path is clean
// and names a page the UI's own router serves; "/" for anything else.
//
// The answer is never next itself. Browsers read a Location by the WHATWG
// URL standard, not as Go does: they drop tabs and newlines anywhere and
// leading spaces and controls, and take "\" for "/", so "/<TAB>/evil",
// "/\evil" or " //evil" may reach another origin. What Strata writes
// from a parsed path cannot: it starts with one "/", its "\" and
// controls are percent-encoded, and a next with controls does not parse.
func (u *UI) returnPath(next string) string {
	p, err := url.Parse(next)
	if err != nil || p.Scheme != "" || p.Opaque != "" || p.User != nil || p.Host != "" ||
		!strings.HasPrefix(p.Path, "/") || path.Clean(p.Path) != p.Path {
		return "/"
	}
	back := &url.URL{Path: p.Path, RawPath: p.RawPath, RawQuery: p.Query().Encode()}
	if _, page := u.mux.Handler(&http.Request{Method: http.MethodGet, URL: back}); page == "" {
		return "/"
	}
	return back.RequestURI()
}

// nextOf is the next the login began with, as its state cookie keeps it.
func nextOf(r *http.Request) string {
	c, err := r.Cookie(stateCookie)
	if err != nil {
		return "/"
	}
	_, next, _ := strings.Cut(c.Value, "|")
	next, err = url.QueryUnescape(next)
	if err != nil {
		return "/"
	}
	return next
}

// stateStore keeps the OAuth state in a cookie of the browser that began
// the login: a code that comes back with another state, or to another
// browser, is refused (no login CSRF).
type stateStore struct {
	secure bool
	// back is the page to return to after the login, from its next.
	back func(next string) string
}

func (s *stateStore) GenerateState(w http.ResponseWriter, r *http.Request) (string, error) {
	state := randomToken()
	http.SetCookie(w, &http.Cookie{
		Name: stateCookie, Value: state + "|" + url.QueryEscape(s.back(r.URL.Query().Get("next"))),
		// Lax: the browser sends it on GitHub's redirect back. Ten
		// minutes: as long as GitHub's code lives.
		Path: loginRoute, MaxAge: 600, HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode,
	})
	return state, nil
}

func (s *stateStore) VerifyState(r *http.Request, state string) (bool, error) {
	c, err := r.Cookie(stateCookie)
	if err != nil {
		return false, nil
	}
	want, _, _ := strings.Cut(c.Value, "|")
	return want != "" && subtle.ConstantTimeCompare([]byte(want), []byte(state)) == 1, nil
}
