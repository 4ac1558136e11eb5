package githubtest

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Repo is a repository of the fake. Its methods are safe for concurrent use
// with the server.
type Repo struct {
	s             *Server
	Owner, Name   string
	id            int64
	defaultBranch string
	parent        *Repo // the repository this one is a fork of
	created       time.Time
	refs          map[string]string // "heads/main" -> SHA
	issues        map[int]*issue    // issues and pull requests, by number
	nextNumber    int
	comments      []*comment
	reactions     map[int64][]Reaction
	checkRuns     []*checkRun
	statuses      map[string][]map[string]any
	perms         map[string]string
}

// AddRepo creates an empty repository whose default branch is main, with a
// first commit holding a README.md, installed for the App.
func (s *Server) AddRepo(owner, name string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.newRepo(owner, name)
	r.commit("main", map[string]string{"README.md": "# " + name + "\n"}, "Initial commit", owner)
	return r
}

// AddFork creates owner's fork of r, with r's branches.
func (s *Server) AddFork(r *Repo, owner string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	f := s.newRepo(owner, r.Name)
	f.parent = r
	f.defaultBranch = r.defaultBranch
	for ref, sha := range r.refs {
		f.refs[ref] = sha
	}
	return f
}

// Repo returns a repository added earlier, or nil.
func (s *Server) Repo(owner, name string) *Repo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.repos[strings.ToLower(owner+"/"+name)]
}

func (s *Server) newRepo(owner, name string) *Repo {
	r := &Repo{
		s: s, Owner: owner, Name: name, id: s.id(), defaultBranch: "main", created: now(),
		refs: map[string]string{}, issues: map[int]*issue{}, reactions: map[int64][]Reaction{},
		statuses: map[string][]map[string]any{}, perms: map[string]string{},
	}
	s.repos[strings.ToLower(owner+"/"+name)] = r
	return r
}

// FullName is "owner/name".
func (r *Repo) FullName() string { return r.Owner + "/" + r.Name }

// DefaultBranch is the repository's default branch.
func (r *Repo) DefaultBranch() string { return r.defaultBranch }

// SetPermission sets a user's permission on the repository: admin, maintain,
// write, triage, read or none. Users without one have none, but the author
// of a PR from a branch of the repository has write (GitHub let them push
// it) unless set otherwise.
func (r *Repo) SetPermission(user, perm string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.perms[user] = perm
}

func nodeID(prefix string, id int64) string {
	return prefix + "_kwDO" + base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%08d", id)))
}

// userID gives every login a stable id. Callers hold s.mu.
func (s *Server) userID(login string) int64 {
	id, ok := s.users[login]
	if !ok {
		id = s.id()
		s.users[login] = id
	}
	return id
}

// userJSON is a user as the REST API and webhooks show it. Logins ending in
// [bot] are bots.
func (s *Server) userJSON(login string) map[string]any {
	id := s.userID(login)
	api := s.APIURL() + "users/" + login
	typ := "User"
	if strings.HasSuffix(login, "[bot]") {
		typ = "Bot"
	}
	return map[string]any{
		"login": login, "id": id, "node_id": nodeID("U", id), "type": typ, "site_admin": false,
		"avatar_url": fmt.Sprintf("%savatars/u/%d?v=4", s.WebURL(), id), "gravatar_id": "",
		"url": api, "html_url": s.WebURL() + login,
		"followers_url": api + "/followers", "following_url": api + "/following{/other_user}",
		"gists_url": api + "/gists{/gist_id}", "starred_url": api + "/starred{/owner}{/repo}",
		"subscriptions_url": api + "/subscriptions", "organizations_url": api + "/orgs",
		"repos_url": api + "/repos", "events_url": api + "/events{/privacy}",
		"received_events_url": api + "/received_events", "user_view_type": "public",
	}
}

// json is the repository as the REST API and webhooks show it.
func (r *Repo) json() map[string]any {
	s := r.s
	api := s.APIURL() + "repos/" + r.FullName()
	html := s.WebURL() + r.FullName()
	m := map[string]any{
		"id": r.id, "node_id": nodeID("R", r.id), "name": r.Name, "full_name": r.FullName(),
		"owner": s.userJSON(r.Owner), "private": false, "visibility": "public", "html_url": html,
		"description": nil, "fork": r.parent != nil, "url": api, "homepage": nil, "language": "HCL",
		"created_at": r.created, "updated_at": r.created, "pushed_at": r.created,
		"git_url": strings.Replace(html, "http://", "git://", 1) + ".git", "ssh_url": "git@github.test:" + r.FullName() + ".git",
		"clone_url": html + ".git", "svn_url": html, "mirror_url": nil,
		"size": 100, "stargazers_count": 0, "watchers_count": 0, "watchers": 0, "forks_count": 0, "forks": 0,
		"open_issues_count": 0, "open_issues": 0, "has_issues": true, "has_projects": true, "has_downloads": true,
		"has_wiki": true, "has_pages": false, "has_discussions": false, "archived": false, "disabled": false,
		"license": nil, "topics": []string{}, "is_template": false, "web_commit_signoff_required": false,
		"allow_forking": true, "default_branch": r.defaultBranch,
		"allow_squash_merge": true, "allow_merge_commit": true, "allow_rebase_merge": true,
		"allow_auto_merge": false, "delete_branch_on_merge": false,
		"permissions": map[string]bool{"admin": false, "maintain": false, "push": true, "triage": true, "pull": true},
	}
	for k, v := range map[string]string{
		"archive_url": "/{archive_format}{/ref}", "assignees_url": "/assignees{/user}", "blobs_url": "/git/blobs{/sha}",
		"branches_url": "/branches{/branch}", "collaborators_url": "/collaborators{/collaborator}",
		"comments_url": "/comments{/number}", "commits_url": "/commits{/sha}", "compare_url": "/compare/{base}...{head}",
		"contents_url": "/contents/{+path}", "contributors_url": "/contributors", "deployments_url": "/deployments",
		"downloads_url": "/downloads", "events_url": "/events", "forks_url": "/forks", "git_commits_url": "/git/commits{/sha}",
		"git_refs_url": "/git/refs{/sha}", "git_tags_url": "/git/tags{/sha}", "hooks_url": "/hooks",
		"issue_comment_url": "/issues/comments{/number}", "issue_events_url": "/issues/events{/number}",
		"issues_url": "/issues{/number}", "keys_url": "/keys{/key_id}", "labels_url": "/labels{/name}",
		"languages_url": "/languages", "merges_url": "/merges", "milestones_url": "/milestones{/number}",
		"notifications_url": "/notifications{?since,all,participating}", "pulls_url": "/pulls{/number}",
		"releases_url": "/releases{/id}", "stargazers_url": "/stargazers", "statuses_url": "/statuses/{sha}",
		"subscribers_url": "/subscribers", "subscription_url": "/subscription", "tags_url": "/tags",
		"teams_url": "/teams", "trees_url": "/git/trees{/sha}",
	} {
		m[k] = api + v
	}
	return m
}

func (s *Server) getRepo(c *call) { c.json(http.StatusOK, c.repo.json()) }

func (s *Server) getPermission(c *call) {
	user := c.params["username"]
	perm := c.repo.perms[user]
	if perm == "" {
		perm = "none"
	}
	// The REST field knows only the four legacy levels; role_name has the real one.
	legacy := map[string]string{"maintain": "write", "triage": "read"}[perm]
	if legacy == "" {
		legacy = perm
	}
	c.json(http.StatusOK, map[string]any{"permission": legacy, "role_name": perm, "user": s.userJSON(user)})
}
