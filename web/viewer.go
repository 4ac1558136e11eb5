package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
)

// Viewer is the logged-in user of a request, with the repositories they
// may see: those the App is installed on that GitHub lists for the user's
// own token (GitHub's user-installation repositories), so the UI never
// shows a repository the user could not open on GitHub.
type Viewer struct {
	Login string
	// CSRF goes into every form.
	CSRF  string
	Repos []Repo
	token string
}

// Repo is a repository the viewer may see.
type Repo struct {
	FullName       string
	Owner, Name    string
	InstallationID int64
	Private        bool
}

// JobRepo is the repository as jobs name it.
func (r Repo) JobRepo() jobs.Repo { return jobs.NewRepo(r.InstallationID, r.Owner, r.Name) }

// Repo returns the viewer's repository by full name, case-insensitively as
// GitHub names them.
func (v *Viewer) Repo(fullName string) (Repo, bool) {
	for _, r := range v.Repos {
		if strings.EqualFold(r.FullName, fullName) {
			return r, true
		}
	}
	return Repo{}, false
}

// viewer returns the request's logged-in user. Without a session it sends
// a page request to the login page and answers anything else 401, and
// returns false: the caller stops.
func (u *UI) viewer(w http.ResponseWriter, r *http.Request) (*Viewer, bool) {
	sess, ok := u.sessions.read(r)
	if !ok {
		u.toLogin(w, r)
		return nil, false
	}
	v := &Viewer{Login: sess.Login, CSRF: sess.CSRF, token: sess.Token}
	repos, err := u.repos.get(r.Context(), sess.Token, func(ctx context.Context) ([]Repo, error) { return u.userRepos(ctx, sess.Token) })
	var gerr *github.ErrorResponse
	if errors.As(err, &gerr) && gerr.Response != nil && gerr.Response.StatusCode == http.StatusUnauthorized {
		// The token was revoked or expired: log in again.
		u.sessions.end(w)
		http.Redirect(w, r, "/login", http.StatusFound)
		return nil, false
	}
	if err != nil {
		u.opts.Log.Warn().Err(err).Str("user", sess.Login).Msg("web UI: list the user's repositories")
		u.fail(w, v, http.StatusBadGateway, fmt.Sprintf("GitHub did not list your repositories (%v). Reload in a moment.", err))
		return nil, false
	}
	v.Repos = repos
	return v, true
}

// toLogin sends a page request to the login page, to come back after, and
// answers anything else (event streams, posts) 401.
func (u *UI) toLogin(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && !strings.HasSuffix(r.URL.Path, "/events") {
		http.Redirect(w, r, "/login?next="+url.QueryEscape(r.URL.RequestURI()), http.StatusFound)
		return
	}
	http.Error(w, "log in first", http.StatusUnauthorized)
}

// post is viewer for a form post: it also refuses a post without the
// session's CSRF token.
func (u *UI) post(w http.ResponseWriter, r *http.Request) (*Viewer, bool) {
	v, ok := u.viewer(w, r)
	if !ok {
		return nil, false
	}
	if !checkCSRF(r, session{CSRF: v.CSRF}) {
		u.fail(w, v, http.StatusForbidden, "This form was not sent from Strata's page. Reload the page and try again.")
		return nil, false
	}
	return v, true
}

// userRepos asks GitHub which of the App's repositories the user can read:
// the App's installations the user can reach, and in each the repositories
// the user has access to.
func (u *UI) userRepos(ctx context.Context, token string) ([]Repo, error) {
	gh, err := u.opts.Users.NewTokenClient(token)
	if err != nil {
		return nil, err
	}
	var insts []*github.Installation
	if err := pull.EachPage(func(opts *github.ListOptions) (*github.Response, error) {
		page, res, err := gh.Apps.ListUserInstallations(ctx, opts)
		insts = append(insts, page...)
		return res, err
	}); err != nil {
		return nil, err
	}
	var repos []Repo
	for _, inst := range insts {
		if err := pull.EachPage(func(opts *github.ListOptions) (*github.Response, error) {
			list, res, err := gh.Apps.ListUserRepos(ctx, inst.GetID(), opts)
			if err != nil {
				return res, err
			}
			for _, r := range list.Repositories {
				repos = append(repos, Repo{FullName: r.GetFullName(), Owner: r.GetOwner().GetLogin(), Name: r.GetName(),
					InstallationID: inst.GetID(), Private: r.GetPrivate()})
			}
			return res, nil
		}); err != nil {
			return nil, err
		}
	}
	sort.Slice(repos, func(i, j int) bool { return strings.ToLower(repos[i].FullName) < strings.ToLower(repos[j].FullName) })
	return repos, nil
}

// repoCache keeps each token's repositories for a minute: a page load
// must not cost a user's rate limit a listing each time, and a permission
// GitHub takes away is gone from the UI within a minute.
type repoCache struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]repoEntry
}

type repoEntry struct {
	repos []Repo
	at    time.Time
}

const repoCacheTTL = time.Minute

func newRepoCache(now func() time.Time) *repoCache {
	return &repoCache{now: now, m: map[string]repoEntry{}}
}

func (c *repoCache) get(ctx context.Context, token string, load func(context.Context) ([]Repo, error)) ([]Repo, error) {
	c.mu.Lock()
	e, ok := c.m[token]
	c.mu.Unlock()
	if ok && c.now().Sub(e.at) < repoCacheTTL {
		return e.repos, nil
	}
	repos, err := load(ctx)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, old := range c.m { // expired entries go as new ones come
		if c.now().Sub(old.at) >= repoCacheTTL {
			delete(c.m, k)
		}
	}
	c.m[token] = repoEntry{repos: repos, at: c.now()}
	return repos, nil
}

func (c *repoCache) forget(token string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, token)
}
