package githubtest

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The App's OAuth web flow, for its users to sign in: GitHub's
// /login/oauth/authorize page and /login/oauth/access_token exchange, on the
// web URL. They are not in the REST description, so they are not validated
// against it.

// codeLifetime is how long GitHub lets a web-flow code be exchanged.
const codeLifetime = 10 * time.Minute

// oauthState is the App's OAuth side. Guarded by Server.mu.
type oauthState struct {
	secret    string          // the App's client secret
	secrets   map[string]bool // every secret that works: GitHub Apps may have several
	callback  string          // registered callback URL, "" for none
	denyNext  int             // authorizations to deny, from DenyAuthorize
	codes     map[string]oauthCode
	tokens    map[string]string      // user token -> login
	userRates map[string]*rateWindow // by login: a user's own primary limit
}

// oauthCode is a code the web flow handed out, not yet exchanged.
type oauthCode struct {
	login, redirectURI         string
	challenge, challengeMethod string // PKCE, when the client sent one
	expires                    time.Time
}

func newOAuthState() oauthState {
	secret := randomHex(20)
	return oauthState{secret: secret, secrets: map[string]bool{secret: true},
		codes: map[string]oauthCode{}, tokens: map[string]string{}, userRates: map[string]*rateWindow{}}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// clientID is the App's OAuth client id, as GET /app shows it.
func (s *Server) clientID() string { return "Iv1.strata" + strconv.FormatInt(s.appID, 16) }

// OAuthClient returns the App's OAuth client id and client secret. A client
// secret returned by the manifest conversion works too.
func (s *Server) OAuthClient() (id, secret string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientID(), s.oauth.secret
}

// SetCallbackURL registers the App's callback URL. From then on the web
// flow's redirect_uri must be on its scheme, host and port, with its path or
// one below it, and may be left out; GitHub redirects a mismatch to the
// callback URL with error=redirect_uri_mismatch. Without one, any absolute
// http(s) redirect_uri is accepted.
func (s *Server) SetCallbackURL(u string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.callback = u
}

// DenyAuthorize makes the user deny the next authorization on the sign-in
// page: its POST redirects to redirect_uri with error=access_denied and the
// state, without a code.
func (s *Server) DenyAuthorize() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.oauth.denyNext++
}

// AddUser makes login a user of the fake, who may sign in with the web
// flow, and returns its id. Users with a permission on a repository, and
// anyone the fake has shown (authors, owners), are users already.
func (s *Server) AddUser(login string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.userID(login)
}

// UserToken mints a user-to-server token for login, as the web flow would,
// for tests that call the user routes directly. Like GitHub App user tokens
// with expiration turned off, it does not expire.
func (s *Server) UserToken(login string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.userID(login)
	return s.issueUserToken(login)
}

// issueUserToken mints a token for login. Callers hold s.mu.
func (s *Server) issueUserToken(login string) string {
	tok := "ghu_" + randomHex(18)
	s.oauth.tokens[tok] = login
	return tok
}

// knownUser reports whether login may sign in: a user the fake has shown or
// added, or one with a permission on a repository. Callers hold s.mu.
func (s *Server) knownUser(login string) bool {
	if login == "" || strings.HasSuffix(login, "[bot]") {
		return false
	}
	if _, ok := s.users[login]; ok {
		return true
	}
	for _, r := range s.repos {
		if r.perms[login] != "" {
			return true
		}
	}
	return false
}

// webPaths are the pages of the web URL the fake serves.
var webPaths = map[string]bool{
	"/login/oauth/authorize":    true,
	"/login/oauth/access_token": true,
	"/favicon.ico":              true, // browsers ask for it; a 404 is what they expect
}

func isWebPath(p string) bool { return webPaths[p] }

// serveWeb serves a path of webPaths.
func (s *Server) serveWeb(w http.ResponseWriter, r *http.Request) {
	switch r.Method + " " + r.URL.Path {
	case "GET /login/oauth/authorize":
		s.authorizePage(w, r, r.URL.Query())
	case "POST /login/oauth/authorize":
		if err := r.ParseForm(); err != nil {
			webPage(w, http.StatusBadRequest, "Bad request", err.Error())
			return
		}
		s.authorize(w, r)
	case "POST /login/oauth/access_token":
		s.accessToken(w, r)
	case "GET /favicon.ico":
		http.NotFound(w, r)
	default:
		s.violation(r.Method, r.URL.Path, "method not allowed on this GitHub page")
		webPage(w, http.StatusNotFound, "Page not found", "")
	}
}

// authRequest is an authorization request, checked.
type authRequest struct {
	redirect *url.URL
	state    string
}

// checkAuthRequest checks client_id and redirect_uri as GitHub does. When
// they fail, it has answered and returns nil.
func (s *Server) checkAuthRequest(w http.ResponseWriter, r *http.Request, v url.Values) *authRequest {
	s.mu.Lock()
	callback := s.oauth.callback
	s.mu.Unlock()
	if v.Get("client_id") != s.clientID() {
		webPage(w, http.StatusNotFound, "Page not found", "")
		return nil
	}
	raw := v.Get("redirect_uri")
	if raw == "" {
		raw = callback
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		webPage(w, http.StatusBadRequest, "Redirect URI mismatch",
			"The redirect_uri must be an absolute http or https URL.")
		return nil
	}
	if callback != "" && !underCallback(u, callback) {
		cb, _ := url.Parse(callback)
		redirectWith(w, r, cb, url.Values{"error": {"redirect_uri_mismatch"},
			"error_description": {"The redirect_uri MUST match the registered callback URL for this application."},
			"error_uri":         {"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#redirect-uri-mismatch"}},
			v.Get("state"))
		return nil
	}
	return &authRequest{redirect: u, state: v.Get("state")}
}

// underCallback reports whether u is on callback's scheme, host and port,
// at its path or below.
func underCallback(u *url.URL, callback string) bool {
	cb, err := url.Parse(callback)
	if err != nil || u.Scheme != cb.Scheme || u.Host != cb.Host {
		return false
	}
	base := strings.TrimSuffix(cb.Path, "/")
	return u.Path == cb.Path || u.Path == base || strings.HasPrefix(u.Path, base+"/")
}

// authorizePage is GitHub's sign-in page, where a user signs in and
// authorizes the App at once.
func (s *Server) authorizePage(w http.ResponseWriter, r *http.Request, v url.Values) {
	if s.checkAuthRequest(w, r, v) == nil {
		return
	}
	signInPage(w, v, "")
}

// authorize is the sign-in form's POST: a code for a known user.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	v := r.PostForm
	req := s.checkAuthRequest(w, r, v)
	if req == nil {
		return
	}
	login := strings.TrimSpace(v.Get("login"))
	s.mu.Lock()
	if !s.knownUser(login) {
		s.mu.Unlock()
		signInPage(w, v, "Incorrect username or password.")
		return
	}
	if s.oauth.denyNext > 0 {
		s.oauth.denyNext--
		s.mu.Unlock()
		redirectWith(w, r, req.redirect, url.Values{"error": {"access_denied"},
			"error_description": {"The user has denied your application access."},
			"error_uri":         {"https://docs.github.com/apps/managing-oauth-apps/troubleshooting-authorization-request-errors/#access-denied"}},
			req.state)
		return
	}
	s.userID(login)
	code := randomHex(10)
	s.oauth.codes[code] = oauthCode{login: login, redirectURI: v.Get("redirect_uri"),
		challenge: v.Get("code_challenge"), challengeMethod: v.Get("code_challenge_method"),
		expires: time.Now().Add(codeLifetime)}
	s.mu.Unlock()
	redirectWith(w, r, req.redirect, url.Values{"code": {code}}, req.state)
}

// redirectWith redirects to u with params and state added to its query.
func redirectWith(w http.ResponseWriter, r *http.Request, u *url.URL, params url.Values, state string) {
	to := *u
	q := to.Query()
	for k, vs := range params {
		q[k] = vs
	}
	if state != "" {
		q.Set("state", state)
	}
	to.RawQuery = q.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

// accessToken exchanges a code for a user token. GitHub answers errors
// with status 200 and an "error" field, which golang.org/x/oauth2 turns
// into a *oauth2.RetrieveError.
func (s *Server) accessToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		webPage(w, http.StatusBadRequest, "Bad request", err.Error())
		return
	}
	id, secret := r.Form.Get("client_id"), r.Form.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok {
		// golang.org/x/oauth2 escapes them, as RFC 6749 section 2.3.1 asks.
		id, _ = url.QueryUnescape(u)
		secret, _ = url.QueryUnescape(p)
	}
	code := r.Form.Get("code")
	s.mu.Lock()
	defer s.mu.Unlock()
	c, known := s.oauth.codes[code]
	var fail *oauthError
	switch {
	case id != s.clientID() || !s.secretOK(secret):
		fail = &oauthError{"incorrect_client_credentials", "The client_id and/or client_secret passed are incorrect.", "incorrect-client-credentials"}
	case r.Form.Get("grant_type") != "" && r.Form.Get("grant_type") != "authorization_code":
		fail = &oauthError{"unsupported_grant_type", "The grant type is not supported.", ""}
	case !known || time.Now().After(c.expires):
		fail = &oauthError{"bad_verification_code", "The code passed is incorrect or expired.", "bad-verification-code"}
	case r.Form.Get("redirect_uri") != "" && r.Form.Get("redirect_uri") != c.redirectURI:
		fail = &oauthError{"redirect_uri_mismatch", "The redirect_uri MUST match the registered callback URL for this application.", "redirect-uri-mismatch"}
	case !pkceOK(c, r.Form.Get("code_verifier")):
		fail = &oauthError{"bad_verification_code", "The code_verifier does not match the code_challenge.", "bad-verification-code"}
	}
	if fail != nil {
		writeToken(w, r, fail.values())
		return
	}
	delete(s.oauth.codes, code)
	writeToken(w, r, url.Values{"access_token": {s.issueUserToken(c.login)}, "token_type": {"bearer"}, "scope": {""}})
}

// oauthError is an error of the token exchange, as GitHub words it.
type oauthError struct{ code, description, anchor string }

func (e *oauthError) values() url.Values {
	uri := "https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/"
	if e.anchor != "" {
		uri += "#" + e.anchor
	}
	return url.Values{"error": {e.code}, "error_description": {e.description}, "error_uri": {uri}}
}

// secretOK compares in constant time, as a real server would. Callers hold s.mu.
func (s *Server) secretOK(secret string) bool {
	ok := false
	for known := range s.oauth.secrets {
		if subtle.ConstantTimeCompare([]byte(known), []byte(secret)) == 1 {
			ok = true
		}
	}
	return ok
}

// addClientSecret makes secret one of the App's client secrets. Callers hold s.mu.
func (s *Server) addClientSecret(secret string) { s.oauth.secrets[secret] = true }

// pkceOK checks the code_verifier of a code that came with a code_challenge.
func pkceOK(c oauthCode, verifier string) bool {
	switch {
	case c.challenge == "":
		return true
	case c.challengeMethod == "plain":
		return verifier == c.challenge
	default:
		sum := sha256.Sum256([]byte(verifier))
		return verifier != "" && base64.RawURLEncoding.EncodeToString(sum[:]) == c.challenge
	}
}

// writeToken answers the exchange in JSON when asked, else form-encoded,
// as GitHub does, always with status 200.
func writeToken(w http.ResponseWriter, r *http.Request, v url.Values) {
	if strings.Contains(r.Header.Get("Accept"), "application/json") {
		m := map[string]string{}
		for k := range v {
			m[k] = v.Get(k)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		_ = json.NewEncoder(w).Encode(m)
		return
	}
	w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
	_, _ = w.Write([]byte(v.Encode()))
}

var signInTemplate = template.Must(template.New("signin").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>Sign in to GitHub · GitHub</title><link rel="icon" href="data:,"></head>
<body>
<main>
<h1>Sign in to GitHub</h1>
<p>to continue to <strong>Strata Test</strong></p>
{{if .Error}}<div id="error" role="alert">{{.Error}}</div>
{{end}}<form action="/login/oauth/authorize" method="post">
{{range .Hidden}}<input type="hidden" name="{{.Name}}" value="{{.Value}}">
{{end}}<label for="login">Username or email address</label>
<input type="text" name="login" id="login" value="{{.Login}}" autocomplete="username" autofocus>
<button type="submit" id="authorize">Authorize</button>
</form>
</main>
</body>
</html>
`))

// signInPage renders the sign-in form, carrying the authorization
// request's parameters as hidden fields.
func signInPage(w http.ResponseWriter, v url.Values, errMsg string) {
	type field struct{ Name, Value string }
	var hidden []field
	for _, k := range []string{"client_id", "redirect_uri", "state", "scope", "code_challenge", "code_challenge_method", "allow_signup", "prompt"} {
		if v.Has(k) {
			hidden = append(hidden, field{k, v.Get(k)})
		}
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_ = signInTemplate.Execute(w, map[string]any{"Hidden": hidden, "Login": v.Get("login"), "Error": errMsg})
}

var pageTemplate = template.Must(template.New("page").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{{.Title}} · GitHub</title><link rel="icon" href="data:,"></head>
<body><main><h1>{{.Title}}</h1>{{if .Text}}<p>{{.Text}}</p>{{end}}</main></body>
</html>
`))

// webPage is one of GitHub's error pages.
func webPage(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_ = pageTemplate.Execute(w, map[string]string{"Title": title, "Text": text})
}
