package pull

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/google/go-github/v60/github"
)

// GitHubRepo reads a repository through an installation's client. It caches
// what it read, so make one per job: a job sees one state of GitHub.
type GitHubRepo struct {
	gh          *github.Client
	owner, name string

	mu    sync.Mutex
	files map[[2]string][]byte
	trees map[string]Tree
	perms map[string]Permission
	teams map[string][]string // "org/slug" -> members, nil when not found
}

// NewRepo reads owner/name with gh.
func NewRepo(gh *github.Client, owner, name string) *GitHubRepo {
	return &GitHubRepo{gh: gh, owner: owner, name: name,
		files: map[[2]string][]byte{}, trees: map[string]Tree{}, perms: map[string]Permission{},
		teams: map[string][]string{}}
}

func (r *GitHubRepo) FullName() string { return r.owner + "/" + r.name }

func notFound(resp *github.Response) bool {
	return resp != nil && resp.StatusCode == http.StatusNotFound
}

func (r *GitHubRepo) File(ctx context.Context, ref, p string) ([]byte, error) {
	key := [2]string{ref, p}
	r.mu.Lock()
	b, ok := r.files[key]
	r.mu.Unlock()
	if ok {
		if b == nil {
			return nil, ErrNotFound
		}
		return b, nil
	}
	file, _, resp, err := r.gh.Repositories.GetContents(ctx, r.owner, r.name, p, &github.RepositoryContentGetOptions{Ref: ref})
	switch {
	case notFound(resp):
		b = nil
	case err != nil:
		return nil, fmt.Errorf("read %s at %s: %w", p, ref, err)
	case file == nil:
		return nil, fmt.Errorf("%s at %s is a directory", p, ref)
	default:
		text, err := file.GetContent()
		if err != nil {
			return nil, fmt.Errorf("decode %s at %s: %w", p, ref, err)
		}
		b = []byte(text)
	}
	r.mu.Lock()
	r.files[key] = b
	r.mu.Unlock()
	if b == nil {
		return nil, ErrNotFound
	}
	return b, nil
}

func (r *GitHubRepo) Tree(ctx context.Context, ref string) (Tree, error) {
	r.mu.Lock()
	t, ok := r.trees[ref]
	r.mu.Unlock()
	if ok {
		return t, nil
	}
	tree, _, err := r.gh.Git.GetTree(ctx, r.owner, r.name, ref, true)
	if err != nil {
		return nil, fmt.Errorf("list the tree of %s at %s: %w", r.FullName(), ref, err)
	}
	if tree.GetTruncated() {
		return nil, errors.New("the repository tree is too large for GitHub to list; paths in .strata.yaml cannot be checked")
	}
	t = Tree{}
	for _, e := range tree.Entries {
		t[e.GetPath()] = e.GetType() == "tree"
	}
	r.mu.Lock()
	r.trees[ref] = t
	r.mu.Unlock()
	return t, nil
}

func (r *GitHubRepo) BranchHead(ctx context.Context, branch string) (string, string, error) {
	if branch == "" {
		repo, _, err := r.gh.Repositories.Get(ctx, r.owner, r.name)
		if err != nil {
			return "", "", fmt.Errorf("read %s: %w", r.FullName(), err)
		}
		branch = repo.GetDefaultBranch()
	}
	ref, resp, err := r.gh.Git.GetRef(ctx, r.owner, r.name, "heads/"+branch)
	if notFound(resp) {
		return "", branch, fmt.Errorf("branch %s of %s: %w", branch, r.FullName(), ErrNotFound)
	}
	if err != nil {
		return "", branch, fmt.Errorf("read the branch %s of %s: %w", branch, r.FullName(), err)
	}
	return ref.GetObject().GetSHA(), branch, nil
}

// Compare reads one page of the comparison: the status, counts and merge
// base come with any page, and a guard or a merge base needs no files.
func (r *GitHubRepo) Compare(ctx context.Context, base, head string) (*Comparison, error) {
	return r.compare(ctx, base, head, false)
}

func (r *GitHubRepo) CompareFiles(ctx context.Context, base, head string) (*Comparison, error) {
	return r.compare(ctx, base, head, true)
}

func (r *GitHubRepo) compare(ctx context.Context, base, head string, files bool) (*Comparison, error) {
	out := &Comparison{}
	opts := &github.ListOptions{PerPage: 1}
	if files {
		opts.PerPage = 100
	}
	for {
		cmp, resp, err := r.gh.Repositories.CompareCommits(ctx, r.owner, r.name, base, head, opts)
		if notFound(resp) {
			return nil, fmt.Errorf("compare %s...%s in %s: %w", short(base), short(head), r.FullName(), ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("compare %s...%s in %s: %w", short(base), short(head), r.FullName(), err)
		}
		out.Status, out.AheadBy, out.BehindBy = cmp.GetStatus(), cmp.GetAheadBy(), cmp.GetBehindBy()
		out.MergeBase = cmp.GetMergeBaseCommit().GetSHA()
		if !files {
			return out, nil
		}
		for _, f := range cmp.Files {
			out.Files = append(out.Files, f.GetFilename())
			if prev := f.GetPreviousFilename(); prev != "" {
				out.Files = append(out.Files, prev) // a rename touches both places
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

// Permission asks GitHub for the user's role (the collaborator permission
// API; role_name knows maintain and triage). A user GitHub does not know as
// a collaborator has none.
func (r *GitHubRepo) Permission(ctx context.Context, user string) (Permission, error) {
	r.mu.Lock()
	p, ok := r.perms[user]
	r.mu.Unlock()
	if ok {
		return p, nil
	}
	req, err := r.gh.NewRequest("GET", fmt.Sprintf("repos/%s/%s/collaborators/%s/permission", r.owner, r.name, user), nil)
	if err != nil {
		return None, err
	}
	var level struct {
		Permission string `json:"permission"`
		RoleName   string `json:"role_name"`
	}
	resp, err := r.gh.Do(ctx, req, &level)
	switch {
	case notFound(resp):
		p = None
	case err != nil:
		return None, fmt.Errorf("permission of %s on %s: %w", user, r.FullName(), err)
	default:
		p = Permission(level.Permission)
		if role := Permission(level.RoleName); role.Valid() {
			p = role
		}
		if !p.Valid() {
			p = None
		}
	}
	r.mu.Lock()
	r.perms[user] = p
	r.mu.Unlock()
	return p, nil
}

// TeamMembers lists a team's members, every page, once per job. GitHub
// answers 404 for a team that does not exist and for one the App cannot see
// (it needs the organization's Members: read permission).
func (r *GitHubRepo) TeamMembers(ctx context.Context, org, slug string) ([]string, error) {
	key := strings.ToLower(org + "/" + slug)
	r.mu.Lock()
	members, ok := r.teams[key]
	r.mu.Unlock()
	if ok {
		if members == nil {
			return nil, ErrNotFound
		}
		return members, nil
	}
	members = []string{}
	err := EachPage(func(opts *github.ListOptions) (*github.Response, error) {
		page, resp, err := r.gh.Teams.ListTeamMembersBySlug(ctx, org, slug, &github.TeamListTeamMembersOptions{ListOptions: *opts})
		for _, u := range page {
			members = append(members, u.GetLogin())
		}
		if notFound(resp) {
			members = nil
			return &github.Response{}, nil
		}
		return resp, err
	})
	if err != nil {
		return nil, fmt.Errorf("members of the team %s/%s: %w", org, slug, err)
	}
	r.mu.Lock()
	r.teams[key] = members
	r.mu.Unlock()
	if members == nil {
		return nil, fmt.Errorf("the team %s/%s: %w", org, slug, ErrNotFound)
	}
	return members, nil
}

// GitHubPR is a pull request read through an installation's client, cached
// for one job.
type GitHubPR struct {
	*GitHubRepo
	pr *github.PullRequest

	reviews  lazy[[]Review]
	statuses lazy[[]Status]
	files    lazy[[]string]
	comments lazy[[]Comment]
	behind   lazy[int]
}

// lazy reads a value once; a failed read is tried again next time.
type lazy[T any] struct {
	mu   sync.Mutex
	done bool
	v    T
}

func (l *lazy[T]) get(read func() (T, error)) (T, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return l.v, nil
	}
	v, err := read()
	if err != nil {
		return v, err
	}
	l.v, l.done = v, true
	return v, nil
}

// Open reads PR number of owner/name.
func Open(ctx context.Context, gh *github.Client, owner, name string, number int) (*GitHubPR, error) {
	return NewRepo(gh, owner, name).PR(ctx, number)
}

// PR reads a pull request of the repository, sharing the repository's cache.
func (r *GitHubRepo) PR(ctx context.Context, number int) (*GitHubPR, error) {
	pr, _, err := r.gh.PullRequests.Get(ctx, r.owner, r.name, number)
	if err != nil {
		return nil, fmt.Errorf("%s#%d: %w", r.FullName(), number, err)
	}
	return &GitHubPR{GitHubRepo: r, pr: pr}, nil
}

func (p *GitHubPR) Number() int           { return p.pr.GetNumber() }
func (p *GitHubPR) HeadSHA() string       { return p.pr.GetHead().GetSHA() }
func (p *GitHubPR) HeadRepo() string      { return p.pr.GetHead().GetRepo().GetFullName() }
func (p *GitHubPR) BaseRef() string       { return p.pr.GetBase().GetRef() }
func (p *GitHubPR) DefaultBranch() string { return p.pr.GetBase().GetRepo().GetDefaultBranch() }
func (p *GitHubPR) Open() bool            { return p.pr.GetState() == "open" }
func (p *GitHubPR) Author() string        { return p.pr.GetUser().GetLogin() }
func (p *GitHubPR) URL() string           { return p.pr.GetHTMLURL() }

// Fork: a head repository GitHub deleted counts as a fork too.
func (p *GitHubPR) Fork() bool { return p.HeadRepo() != p.FullName() }

func (p *GitHubPR) Conflicts() bool {
	return p.pr.Mergeable != nil && !p.pr.GetMergeable() || p.pr.GetMergeableState() == "dirty"
}

// EachPage calls list for every page of a GitHub list, from the first, 100
// at a time: the one pagination loop.
func EachPage(list func(opts *github.ListOptions) (*github.Response, error)) error {
	opts := &github.ListOptions{PerPage: 100}
	for {
		resp, err := list(opts)
		if err != nil {
			return err
		}
		if resp.NextPage == 0 {
			return nil
		}
		opts.Page = resp.NextPage
	}
}

func (p *GitHubPR) Reviews(ctx context.Context) ([]Review, error) {
	return p.reviews.get(func() ([]Review, error) {
		var out []Review
		err := EachPage(func(opts *github.ListOptions) (*github.Response, error) {
			page, resp, err := p.gh.PullRequests.ListReviews(ctx, p.owner, p.name, p.Number(), opts)
			for _, r := range page {
				out = append(out, Review{Author: r.GetUser().GetLogin(), State: r.GetState(), CommitID: r.GetCommitID(),
					Submitted: r.GetSubmittedAt().Time})
			}
			return resp, err
		})
		if err != nil {
			return nil, fmt.Errorf("reviews of %s#%d: %w", p.FullName(), p.Number(), err)
		}
		return out, nil
	})
}

func (p *GitHubPR) Statuses(ctx context.Context) ([]Status, error) {
	return p.statuses.get(func() ([]Status, error) {
		head := p.HeadSHA()
		var out []Status
		err := EachPage(func(opts *github.ListOptions) (*github.Response, error) {
			res, resp, err := p.gh.Checks.ListCheckRunsForRef(ctx, p.owner, p.name, head, &github.ListCheckRunsOptions{ListOptions: *opts})
			if err != nil {
				return resp, err
			}
			for _, cr := range res.CheckRuns {
				out = append(out, Status{Name: cr.GetName(), Outcome: cr.GetConclusion()})
			}
			return resp, nil
		})
		if err != nil {
			return nil, fmt.Errorf("checks of %s@%s: %w", p.FullName(), short(head), err)
		}
		err = EachPage(func(opts *github.ListOptions) (*github.Response, error) {
			res, resp, err := p.gh.Repositories.GetCombinedStatus(ctx, p.owner, p.name, head, opts)
			if err != nil {
				return resp, err
			}
			for _, s := range res.Statuses {
				out = append(out, Status{Name: s.GetContext(), Outcome: s.GetState()})
			}
			return resp, nil
		})
		if err != nil {
			return nil, fmt.Errorf("statuses of %s@%s: %w", p.FullName(), short(head), err)
		}
		return out, nil
	})
}

func (p *GitHubPR) BehindBy(ctx context.Context) (int, error) {
	return p.behind.get(func() (int, error) {
		cmp, err := p.Compare(ctx, p.BaseRef(), p.HeadSHA())
		if err != nil {
			return 0, err
		}
		return cmp.BehindBy, nil
	})
}

func (p *GitHubPR) ChangedFiles(ctx context.Context) ([]string, error) {
	return p.files.get(func() ([]string, error) {
		var out []string
		err := EachPage(func(opts *github.ListOptions) (*github.Response, error) {
			files, resp, err := p.gh.PullRequests.ListFiles(ctx, p.owner, p.name, p.Number(), opts)
			for _, f := range files {
				out = append(out, f.GetFilename())
				if prev := f.GetPreviousFilename(); prev != "" {
					out = append(out, prev) // a rename touches both places
				}
			}
			return resp, err
		})
		if err != nil {
			return nil, fmt.Errorf("list files of %s#%d: %w", p.FullName(), p.Number(), err)
		}
		return out, nil
	})
}

func (p *GitHubPR) Comments(ctx context.Context) ([]Comment, error) {
	return p.comments.get(func() ([]Comment, error) {
		var out []Comment
		err := EachPage(func(opts *github.ListOptions) (*github.Response, error) {
			page, resp, err := p.gh.Issues.ListComments(ctx, p.owner, p.name, p.Number(), &github.IssueListCommentsOptions{ListOptions: *opts})
			for _, c := range page {
				out = append(out, Comment{ID: c.GetID(), Author: c.GetUser().GetLogin(), Body: c.GetBody()})
			}
			return resp, err
		})
		if err != nil {
			return nil, fmt.Errorf("comments of %s#%d: %w", p.FullName(), p.Number(), err)
		}
		return out, nil
	})
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

var (
	_ Context    = (*GitHubPR)(nil)
	_ Repository = (*GitHubRepo)(nil)
)
