package githubtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	jwt "github.com/golang-jwt/jwt/v4"
)

// appRoutes are authenticated as the App itself, with its JWT.
var appRoutes = map[string]bool{
	"/app":                                 true,
	"/app/installations":                   true,
	"/app/installations/{installation_id}": true,
	"/app/installations/{installation_id}/access_tokens": true,
	"/repos/{owner}/{repo}/installation":                 true,
}

// authorized checks the Authorization header the way GitHub does for the
// route, answering 401 when it fails.
func (s *Server) authorized(w http.ResponseWriter, r *http.Request, route string) bool {
	if route == "/app-manifests/{code}/conversions" {
		return true // GitHub needs no credentials to convert a manifest code
	}
	if decided, ok := s.authorizeUser(w, r, route); decided {
		return ok
	}
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	var err error
	switch {
	case cred == "":
		err = fmt.Errorf("no Authorization header")
	case appRoutes[route]:
		if !strings.EqualFold(scheme, "bearer") {
			err = fmt.Errorf("want a JWT as Bearer, got %q", scheme)
		} else {
			err = s.verifyJWT(cred)
		}
	default:
		if !strings.EqualFold(scheme, "token") && !strings.EqualFold(scheme, "bearer") {
			err = fmt.Errorf("unknown scheme %q", scheme)
		} else {
			err = s.verifyToken(cred)
		}
	}
	if err != nil {
		s.t.Logf("githubtest: %s %s: 401: %v", r.Method, r.URL.Path, err)
		writeJSON(w, http.StatusUnauthorized, ghError("Bad credentials"))
		return false
	}
	return true
}

func (s *Server) verifyJWT(token string) error {
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(token, claims, func(tok *jwt.Token) (any, error) {
		if tok.Method != jwt.SigningMethodRS256 {
			return nil, fmt.Errorf("JWT must be RS256, is %v", tok.Header["alg"])
		}
		return &s.key.PublicKey, nil
	})
	if err != nil {
		return fmt.Errorf("invalid JWT: %w", err)
	}
	if !claims.VerifyExpiresAt(time.Now().Unix(), true) || !claims.VerifyIssuedAt(time.Now().Unix()+60, true) {
		return fmt.Errorf("JWT exp or iat missing or out of range")
	}
	if iss := fmt.Sprint(claims["iss"]); iss != strconv.FormatInt(s.appID, 10) {
		return fmt.Errorf("JWT iss %q is not the App ID %d", iss, s.appID)
	}
	return nil
}

func (s *Server) verifyToken(token string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.tokens[token]
	if !ok {
		return fmt.Errorf("unknown installation token")
	}
	if time.Now().After(exp) {
		return fmt.Errorf("installation token expired")
	}
	return nil
}

// Token issues an installation token, for tests that call the API directly.
func (s *Server) Token() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	tok, _ := s.issueToken()
	return tok
}

func (s *Server) issueToken() (string, time.Time) {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	tok := "ghs_" + hex.EncodeToString(b)
	exp := now().Add(time.Hour)
	s.tokens[tok] = exp
	return tok, exp
}

// AddManifestCode registers a code the App manifest flow may convert, once.
func (s *Server) AddManifestCode(code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.manifests[code] = true
}

func (s *Server) appJSON() map[string]any {
	return map[string]any{
		"id": s.appID, "slug": s.appSlug, "node_id": nodeID("A", s.appID),
		"client_id": s.clientID(), "name": "Strata Test",
		"owner": s.userJSON("acme"), "description": "Strata, faked", "external_url": "https://strata.example",
		"html_url": s.WebURL() + "apps/" + s.appSlug, "created_at": s.started, "updated_at": s.started,
		"permissions": map[string]string{"checks": "write", "contents": "write", "issues": "write",
			"pull_requests": "write", "metadata": "read", "members": "read", "merge_queues": "read"},
		"events":              []string{"issue_comment", "pull_request", "pull_request_review", "push", "check_run", "merge_group"},
		"installations_count": 1,
	}
}

func (s *Server) installationJSON() map[string]any {
	return map[string]any{
		"id": s.installationID, "app_id": s.appID, "app_slug": s.appSlug, "target_type": "Organization",
		"account": s.userJSON("acme"), "repository_selection": "all",
		"access_tokens_url": fmt.Sprintf("%sapp/installations/%d/access_tokens", s.APIURL(), s.installationID),
		"repositories_url":  s.APIURL() + "installation/repositories",
		"html_url":          fmt.Sprintf("%sorganizations/acme/settings/installations/%d", s.WebURL(), s.installationID),
		"target_id":         s.userID("acme"), "permissions": s.appJSON()["permissions"],
		"events": s.appJSON()["events"], "created_at": s.started, "updated_at": s.started,
		"single_file_name": nil, "suspended_at": nil, "suspended_by": nil,
	}
}

func (s *Server) getApp(c *call) { c.json(http.StatusOK, s.appJSON()) }

func (s *Server) getRepoInstallation(c *call) { c.json(http.StatusOK, s.installationJSON()) }

func (s *Server) createAccessToken(c *call) {
	if c.intParam("installation_id") != s.installationID {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	tok, exp := s.issueToken()
	c.json(http.StatusCreated, map[string]any{
		"token": tok, "expires_at": exp, "permissions": s.appJSON()["permissions"],
		"repository_selection": "all",
	})
}

func (s *Server) convertManifest(c *call) {
	code := c.params["code"]
	if !s.manifests[code] {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	delete(s.manifests, code)
	app := s.appJSON()
	app["pem"] = string(s.keyPEM)
	app["webhook_secret"] = "whsec-" + code
	app["client_secret"] = "cs-" + code
	s.addClientSecret("cs-" + code)
	c.json(http.StatusCreated, app)
}
