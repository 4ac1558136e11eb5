package githubtest

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The user-to-server routes a web UI calls with a user token from the OAuth
// web flow (oauth.go).

// userRoutes want a user token; user tokens work on nothing else in the
// fake, which does not model a user's access to repositories through the App.
var userRoutes = map[string]bool{
	"/user":               true,
	"/user/installations": true,
	"/user/installations/{installation_id}/repositories": true,
}

// authorizeUser applies GitHub's rules for user tokens to a route: they
// alone may use the user routes, and nothing else but the App's (JWT)
// routes, left to authorized. It reports whether it decided, and if so
// whether the request may go on; a refusal is answered.
func (s *Server) authorizeUser(w http.ResponseWriter, r *http.Request, route string) (decided, ok bool) {
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	isUserToken := strings.HasPrefix(cred, "ghu_")
	switch {
	case appRoutes[route] || (!userRoutes[route] && !isUserToken):
		return false, false
	case cred == "":
		return true, s.refuse(w, r, http.StatusUnauthorized, "Requires authentication")
	case !strings.EqualFold(scheme, "token") && !strings.EqualFold(scheme, "bearer"):
		return true, s.refuse(w, r, http.StatusUnauthorized, "Bad credentials")
	case isUserToken:
		s.mu.Lock()
		_, known := s.oauth.tokens[cred]
		s.mu.Unlock()
		switch {
		case !known:
			return true, s.refuse(w, r, http.StatusUnauthorized, "Bad credentials")
		case userRoutes[route]:
			return true, true
		case route == "/installation/repositories":
			return true, s.refuse(w, r, http.StatusForbidden, "You must authenticate with an installation access token in order to list repositories for an installation.")
		default:
			return true, s.refuse(w, r, http.StatusForbidden, "Resource not accessible by integration")
		}
	}
	// A user route with an installation token or the App's JWT.
	if s.verifyToken(cred) != nil && s.verifyJWT(cred) != nil {
		return true, s.refuse(w, r, http.StatusUnauthorized, "Bad credentials")
	}
	if route == "/user/installations" || route == "/user/installations/{installation_id}/repositories" {
		return true, s.refuse(w, r, http.StatusForbidden, "You must authenticate with an access token authorized to a GitHub App in order to list installations")
	}
	return true, s.refuse(w, r, http.StatusForbidden, "Resource not accessible by integration")
}

// refuse answers a request its credentials do not allow, and returns false.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, status int, msg string) bool {
	s.t.Logf("githubtest: %s %s: %d: %s", r.Method, r.URL.Path, status, msg)
	writeJSON(w, status, ghError(msg))
	return false
}

// user is the login of the call's user token. Callers hold s.mu.
func (c *call) user() string {
	_, cred, _ := strings.Cut(c.r.Header.Get("Authorization"), " ")
	return c.s.oauth.tokens[cred]
}

func (s *Server) getUser(c *call) {
	login := c.user()
	u := s.userJSON(login)
	for k, v := range map[string]any{
		"name": login, "company": nil, "blog": "", "location": nil, "email": nil, "hireable": nil,
		"bio": nil, "twitter_username": nil, "public_repos": 0, "public_gists": 0, "followers": 0,
		"following": 0, "created_at": s.started, "updated_at": s.started,
	} {
		u[k] = v
	}
	c.json(http.StatusOK, u)
}

// readableRepos are the installation's repositories on which login has an
// explicit permission of read or more, by name. Callers hold s.mu.
func (s *Server) readableRepos(login string) []*Repo {
	var keys []string
	for key, r := range s.repos {
		if r.Owner == installationAccount && permRank[r.perms[login]] > 0 {
			keys = append(keys, key)
		}
	}
	sort.Strings(keys)
	repos := make([]*Repo, len(keys))
	for i, k := range keys {
		repos[i] = s.repos[k]
	}
	return repos
}

// permRank orders the permissions; 0 is none.
var permRank = map[string]int{"read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}

func (s *Server) listUserInstallations(c *call) {
	items := []any{}
	if len(s.readableRepos(c.user())) > 0 {
		items = append(items, s.installationJSON())
	}
	c.json(http.StatusOK, map[string]any{"total_count": len(items), "installations": c.paginate(items)})
}

func (s *Server) listUserInstallationRepos(c *call) {
	repos := s.readableRepos(c.user())
	if c.intParam("installation_id") != s.installationID || len(repos) == 0 {
		c.fail(http.StatusNotFound, "Not Found") // GitHub hides installations the user cannot see
		return
	}
	items := make([]any, len(repos))
	for i, r := range repos {
		j := r.json()
		rank := permRank[r.perms[c.user()]]
		j["permissions"] = map[string]bool{"admin": rank >= 5, "maintain": rank >= 4, "push": rank >= 3, "triage": rank >= 2, "pull": true}
		items[i] = j
	}
	c.json(http.StatusOK, map[string]any{"total_count": len(items), "repository_selection": "all", "repositories": c.paginate(items)})
}

// userOf is the user whose token r carries to the REST API, or "". Callers
// hold s.mu.
func (s *Server) userOf(r *http.Request) string {
	_, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.HasPrefix(r.URL.Path, "/api/v3/") || !strings.HasPrefix(cred, "ghu_") {
		return ""
	}
	return s.oauth.tokens[cred]
}

// countUserRequest counts a request with login's token against the user's
// own 5000 an hour, which GitHub keeps apart from the installation's, and
// sets the X-RateLimit-* headers. Callers hold s.mu.
func (s *Server) countUserRequest(h http.Header, login string) (over bool) {
	now := s.clock()
	w := s.oauth.userRates[login]
	if w == nil || !now.Before(w.reset) {
		w = &rateWindow{reset: ceilSecond(now.Add(time.Hour))}
		s.oauth.userRates[login] = w
	}
	over = w.used >= rateLimit
	if !over {
		w.used++
	}
	h.Set("X-RateLimit-Limit", strconv.Itoa(rateLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(rateLimit-w.used))
	h.Set("X-RateLimit-Used", strconv.Itoa(w.used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(w.reset.Unix(), 10))
	h.Set("X-RateLimit-Resource", "core")
	return over
}
