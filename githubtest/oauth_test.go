package githubtest

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"
	"golang.org/x/oauth2"
)

// noRedirects is a cookie-less client that shows redirects instead of
// following them.
var noRedirects = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// signIn opens the authorize page at authURL, types login and clicks
// Authorize, as a user would, and returns where GitHub sends them.
func signIn(t *testing.T, authURL, login string) *url.URL {
	t.Helper()
	resp, err := noRedirects.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s = %d\n%s", authURL, resp.StatusCode, page)
	}
	for _, want := range []string{`<form action="/login/oauth/authorize" method="post">`, `name="login" id="login"`, `<button type="submit" id="authorize">Authorize</button>`} {
		if !strings.Contains(string(page), want) {
			t.Fatalf("authorize page lacks %s:\n%s", want, page)
		}
	}
	form := url.Values{"login": {login}}
	for _, m := range hiddenField.FindAllStringSubmatch(string(page), -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	u, _ := url.Parse(authURL)
	resp, err = noRedirects.PostForm(u.Scheme+"://"+u.Host+"/login/oauth/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("POST authorize as %s = %d, want 302", login, resp.StatusCode)
	}
	loc, err := resp.Location()
	if err != nil {
		t.Fatal(err)
	}
	return loc
}

func oauthConfig(srv *Server) oauth2.Config {
	id, secret := srv.OAuthClient()
	return oauth2.Config{ClientID: id, ClientSecret: secret, RedirectURL: "http://strata.test/auth/callback",
		Endpoint: oauth2.Endpoint{AuthURL: srv.WebURL() + "login/oauth/authorize", TokenURL: srv.WebURL() + "login/oauth/access_token"}}
}

func userClient(t *testing.T, srv *Server, token string) *github.Client {
	t.Helper()
	c, err := github.NewClient(nil).WithAuthToken(token).WithEnterpriseURLs(srv.APIURL(), srv.APIURL())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func wantRetrieveError(t *testing.T, err error, code string) {
	t.Helper()
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.ErrorCode != code {
		t.Fatalf("exchange error = %v, want %s", err, code)
	}
}

func TestOAuthWebFlowSignsInAUserWhoSeesOnlyReadableRepos(t *testing.T) {
	srv := NewServer(t)
	srv.SetCallbackURL("http://strata.test/auth")
	infra, secret, other := srv.AddRepo("acme", "infra"), srv.AddRepo("acme", "secret"), srv.AddRepo("acme", "other")
	infra.SetPermission("alice", "read")
	other.SetPermission("alice", "maintain")
	secret.SetPermission("bob", "admin")
	cfg := oauthConfig(srv)
	ctx := context.Background()

	loc := signIn(t, cfg.AuthCodeURL("st&te"), "alice")
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != cfg.RedirectURL || loc.Query().Get("state") != "st&te" {
		t.Fatalf("redirected to %s, want %s with the state", loc, cfg.RedirectURL)
	}
	tok, err := cfg.Exchange(ctx, loc.Query().Get("code"))
	if err != nil || !strings.HasPrefix(tok.AccessToken, "ghu_") || tok.TokenType != "bearer" {
		t.Fatalf("Exchange = %+v, %v", tok, err)
	}
	_, err = cfg.Exchange(ctx, loc.Query().Get("code"))
	wantRetrieveError(t, err, "bad_verification_code")

	gh := github.NewClient(cfg.Client(ctx, tok)) // Bearer, as golang.org/x/oauth2 sends it
	gh, _ = gh.WithEnterpriseURLs(srv.APIURL(), srv.APIURL())
	me, _, err := gh.Users.Get(ctx, "")
	if err != nil || me.GetLogin() != "alice" || me.GetID() == 0 {
		t.Fatalf("GET /user = %v, %v", me, err)
	}
	insts, _, err := gh.Apps.ListUserInstallations(ctx, nil)
	if err != nil || len(insts) != 1 || insts[0].GetID() != srv.InstallationID() {
		t.Fatalf("ListUserInstallations = %v, %v", insts, err)
	}
	var names []string
	opts := &github.ListOptions{PerPage: 1}
	for {
		repos, resp, err := gh.Apps.ListUserRepos(ctx, srv.InstallationID(), opts)
		if err != nil || repos.GetTotalCount() != 2 || len(repos.Repositories) != 1 {
			t.Fatalf("ListUserRepos page %d = %v, %v", opts.Page, repos, err)
		}
		names = append(names, repos.Repositories[0].GetName())
		if resp.Rate.Limit != 5000 || resp.Rate.Remaining != 5000-2-len(names) {
			t.Errorf("user rate = %+v, want alice's own 5000 with %d used", resp.Rate, 2+len(names))
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if strings.Join(names, ",") != "infra,other" {
		t.Errorf("alice's repos = %v, want infra,other (not secret)", names)
	}

	bob := userClient(t, srv, srv.UserToken("bob"))
	repos, _, err := bob.Apps.ListUserRepos(ctx, srv.InstallationID(), nil)
	if err != nil || len(repos.Repositories) != 1 || repos.Repositories[0].GetName() != "secret" || !repos.Repositories[0].GetPermissions()["admin"] {
		t.Fatalf("bob's repos = %v, %v", repos, err)
	}
	srv.AddUser("carol")
	carol := userClient(t, srv, srv.UserToken("carol"))
	if insts, _, err := carol.Apps.ListUserInstallations(ctx, nil); err != nil || len(insts) != 0 {
		t.Errorf("carol's installations = %v, %v; want none", insts, err)
	}
	if _, resp, err := carol.Apps.ListUserRepos(ctx, srv.InstallationID(), nil); resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Errorf("carol's repos: %v, want 404", err)
	}
	if v := srv.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}

func TestOAuthExchangeRefusals(t *testing.T) {
	srv := NewServer(t)
	srv.AddRepo("acme", "infra").SetPermission("alice", "write")
	cfg := oauthConfig(srv)
	ctx := context.Background()
	code := signIn(t, cfg.AuthCodeURL("s"), "alice").Query().Get("code")

	wrong := cfg
	wrong.ClientSecret = "not-the-secret"
	_, err := wrong.Exchange(ctx, code)
	wantRetrieveError(t, err, "incorrect_client_credentials")
	otherRedirect := cfg
	otherRedirect.RedirectURL = "http://strata.test/elsewhere"
	_, err = otherRedirect.Exchange(ctx, code)
	wantRetrieveError(t, err, "redirect_uri_mismatch")

	// Refused attempts leave the code usable; credentials in the body, JSON asked for.
	id, secret := srv.OAuthClient()
	req, _ := http.NewRequest("POST", cfg.Endpoint.TokenURL, strings.NewReader(url.Values{
		"client_id": {id}, "client_secret": {secret}, "code": {code}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]string
	_ = json.NewDecoder(resp.Body).Decode(&body)
	resp.Body.Close()
	if !strings.HasPrefix(body["access_token"], "ghu_") || body["token_type"] != "bearer" || body["scope"] != "" {
		t.Fatalf("JSON exchange = %v", body)
	}

	// The client secret the manifest conversion returned works too.
	srv.AddManifestCode("one")
	anon, _ := github.NewClient(nil).WithEnterpriseURLs(srv.APIURL(), srv.APIURL())
	conv, _, err := anon.Apps.CompleteAppManifest(ctx, "one")
	if err != nil || conv.GetClientID() != cfg.ClientID {
		t.Fatalf("manifest conversion = %v, %v", conv, err)
	}
	fromManifest := cfg
	fromManifest.ClientSecret = conv.GetClientSecret()
	code = signIn(t, cfg.AuthCodeURL("s"), "alice").Query().Get("code")
	if _, err := fromManifest.Exchange(ctx, code); err != nil {
		t.Fatalf("exchange with the manifest's client secret: %v", err)
	}

	// PKCE, when the client uses it.
	verifier := oauth2.GenerateVerifier()
	code = signIn(t, cfg.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), "alice").Query().Get("code")
	_, err = cfg.Exchange(ctx, code, oauth2.VerifierOption(oauth2.GenerateVerifier()))
	wantRetrieveError(t, err, "bad_verification_code")
	if _, err = cfg.Exchange(ctx, code, oauth2.VerifierOption(verifier)); err != nil {
		t.Fatalf("exchange with the verifier: %v", err)
	}
	if v := srv.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}

func TestOAuthAuthorizeRefusals(t *testing.T) {
	srv := NewServer(t)
	srv.AddRepo("acme", "infra").SetPermission("alice", "read")
	cfg := oauthConfig(srv)

	get := func(u string) (int, string, *url.URL) {
		resp, err := noRedirects.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		loc, _ := resp.Location()
		return resp.StatusCode, string(b), loc
	}
	bad := cfg
	bad.ClientID = "Iv1.nobody"
	if status, _, _ := get(bad.AuthCodeURL("s")); status != http.StatusNotFound {
		t.Errorf("unknown client_id = %d, want 404", status)
	}
	bad = cfg
	bad.RedirectURL = "/relative"
	if status, _, _ := get(bad.AuthCodeURL("s")); status != http.StatusBadRequest {
		t.Errorf("relative redirect_uri = %d, want 400", status)
	}

	resp, err := noRedirects.PostForm(srv.WebURL()+"login/oauth/authorize", url.Values{
		"client_id": {cfg.ClientID}, "redirect_uri": {cfg.RedirectURL}, "state": {"s"}, "login": {"mallory"}})
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(page), `id="error"`) || !strings.Contains(string(page), `id="login"`) {
		t.Errorf("unknown user = %d\n%s\nwant the form again with an error", resp.StatusCode, page)
	}

	srv.DenyAuthorize()
	loc := signIn(t, cfg.AuthCodeURL("s1"), "alice")
	if q := loc.Query(); q.Get("error") != "access_denied" || q.Get("state") != "s1" || q.Has("code") {
		t.Errorf("denied authorization redirected to %s", loc)
	}
	if loc := signIn(t, cfg.AuthCodeURL("s2"), "alice"); !loc.Query().Has("code") {
		t.Errorf("authorization after the denial redirected to %s", loc)
	}

	srv.SetCallbackURL("http://strata.test/auth")
	off := cfg
	off.RedirectURL = "http://evil.test/auth/callback"
	if _, _, loc := get(off.AuthCodeURL("s3")); loc == nil || loc.Host != "strata.test" || loc.Query().Get("error") != "redirect_uri_mismatch" {
		t.Errorf("redirect_uri off the callback redirected to %v", loc)
	}
	if v := srv.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}

func TestUserTokensAndInstallationTokensKeepToTheirRoutes(t *testing.T) {
	srv := NewServer(t)
	srv.AddRepo("acme", "infra").SetPermission("alice", "read")
	ctx := context.Background()
	status := func(resp *github.Response) int {
		if resp == nil {
			return 0
		}
		return resp.StatusCode
	}

	inst := clientFor(t, srv)
	if _, resp, _ := inst.Apps.ListUserInstallations(ctx, nil); status(resp) != http.StatusForbidden {
		t.Errorf("installation token on GET /user/installations = %d, want 403", status(resp))
	}
	if _, resp, _ := inst.Users.Get(ctx, ""); status(resp) != http.StatusForbidden {
		t.Errorf("installation token on GET /user = %d, want 403", status(resp))
	}
	atr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, srv.AppID(), srv.PrivateKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	atr.BaseURL = strings.TrimSuffix(srv.APIURL(), "/")
	app, _ := github.NewClient(&http.Client{Transport: atr}).WithEnterpriseURLs(srv.APIURL(), srv.APIURL())
	if _, resp, _ := app.Users.Get(ctx, ""); status(resp) != http.StatusForbidden {
		t.Errorf("JWT on GET /user = %d, want 403", status(resp))
	}
	anon, _ := github.NewClient(nil).WithEnterpriseURLs(srv.APIURL(), srv.APIURL())
	if _, resp, _ := anon.Users.Get(ctx, ""); status(resp) != http.StatusUnauthorized {
		t.Errorf("no credentials on GET /user = %d, want 401", status(resp))
	}
	if _, resp, _ := userClient(t, srv, "ghu_forged").Users.Get(ctx, ""); status(resp) != http.StatusUnauthorized {
		t.Errorf("unknown user token on GET /user = %d, want 401", status(resp))
	}

	alice := userClient(t, srv, srv.UserToken("alice"))
	if _, resp, _ := alice.Apps.ListRepos(ctx, nil); status(resp) != http.StatusForbidden {
		t.Errorf("user token on GET /installation/repositories = %d, want 403", status(resp))
	}
	if _, resp, _ := alice.Repositories.Get(ctx, "acme", "infra"); status(resp) != http.StatusForbidden {
		t.Errorf("user token on GET /repos/acme/infra = %d, want 403", status(resp))
	}
	if _, resp, _ := alice.Apps.Get(ctx, ""); status(resp) != http.StatusUnauthorized {
		t.Errorf("user token on GET /app = %d, want 401 (not a JWT)", status(resp))
	}
	if _, resp, err := inst.Repositories.Get(ctx, "acme", "infra"); err != nil || resp.Rate.Remaining != 5000-3 {
		t.Errorf("installation rate after user requests = %+v, %v; want only its own 3 requests counted", resp.Rate, err)
	}
	if v := srv.Violations(); len(v) != 0 {
		t.Errorf("violations: %v", v)
	}
}
