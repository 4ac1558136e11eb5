package githubtest

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// issue is an issue or, with pr set, a pull request; they share numbers.
type issue struct {
	number        int
	id            int64
	title, body   string
	author        string
	state         string
	created       time.Time
	updated       time.Time
	closed        *time.Time
	pr            *pull
	commentsCount int
}

type pull struct {
	id             int64
	headRepo       *Repo
	headRef        string
	baseRef        string
	merged         bool
	mergeCommit    string
	mergeable      bool
	mergeableState string
	reviews        []review
}

type review struct {
	id        int64
	user      string
	state     string
	commitID  string
	submitted time.Time
}

// PR is a pull request of a Repo.
type PR struct {
	Repo   *Repo
	Number int
}

// HeadSHA is the pull request's current head commit.
func (p *PR) HeadSHA() string {
	p.Repo.s.mu.Lock()
	defer p.Repo.s.mu.Unlock()
	pr := p.Repo.issues[p.Number].pr
	return pr.headRepo.refs["heads/"+pr.headRef]
}

// Push commits files on the pull request's head branch; see Repo.PushPR.
func (p *PR) Push(files map[string]string, message string) string {
	return p.Repo.PushPR(p.Number, files, message)
}

// OpenPR opens a pull request from head into base by author. head is a
// branch of r, or "owner:branch" for a branch of owner's fork (see AddFork).
// The head branch must exist.
func (r *Repo) OpenPR(head, base, author string) *PR {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	headRepo := r
	if owner, branch, ok := strings.Cut(head, ":"); ok {
		headRepo = r.s.repos[strings.ToLower(owner+"/"+r.Name)]
		head = branch
		if headRepo == nil {
			r.s.t.Fatalf("githubtest: OpenPR: no fork %s/%s", owner, r.Name)
		}
	}
	if _, ok := headRepo.refs["heads/"+head]; !ok {
		r.s.t.Fatalf("githubtest: OpenPR: no branch %s in %s", head, headRepo.FullName())
	}
	// A branch of the repository itself was pushed by someone with push
	// access: its author can write, unless the test said otherwise.
	if headRepo == r && r.perms[author] == "" {
		r.perms[author] = "write"
	}
	is := r.newIssue(fmt.Sprintf("Change from %s", head), author)
	is.pr = &pull{id: r.s.id(), headRepo: headRepo, headRef: head, baseRef: base, mergeable: true, mergeableState: "clean"}
	return &PR{Repo: r, Number: is.number}
}

// OpenIssue opens an issue that is not a pull request and returns its number.
func (r *Repo) OpenIssue(title, author string) int {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.newIssue(title, author).number
}

func (r *Repo) newIssue(title, author string) *issue {
	r.nextNumber++
	t := now()
	is := &issue{number: r.nextNumber, id: r.s.id(), title: title, author: author, state: "open", created: t, updated: t}
	r.issues[is.number] = is
	return is
}

func (r *Repo) mustPR(number int) *issue {
	is := r.issues[number]
	if is == nil || is.pr == nil {
		r.s.t.Fatalf("githubtest: %s has no pull request #%d", r.FullName(), number)
	}
	return is
}

// PushPR commits files (content Deleted removes one) on the head branch of
// pull request number, as its author, and returns the new head SHA.
func (r *Repo) PushPR(number int, files map[string]string, message string) string {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	is := r.mustPR(number)
	is.updated = now()
	return is.pr.headRepo.commit(is.pr.headRef, files, message, is.author)
}

// ClosePR closes pull request number. With merged, the head's changes since
// the merge base are merged into the base branch with a merge commit.
func (r *Repo) ClosePR(number int, merged bool) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	is := r.mustPR(number)
	t := now()
	is.state, is.closed, is.updated = "closed", &t, t
	if !merged {
		return
	}
	pr := is.pr
	s := r.s
	head := pr.headRepo.refs["heads/"+pr.headRef]
	base := r.refs["heads/"+pr.baseRef]
	files := s.commitFiles(base)
	mb := s.commitFiles(s.mergeBase(base, head))
	for p, f := range s.commitFiles(head) {
		if mb[p] != f {
			files[p] = f
		}
	}
	for p := range mb {
		if _, ok := s.commitFiles(head)[p]; !ok {
			delete(files, p)
		}
	}
	msg := fmt.Sprintf("Merge pull request #%d from %s/%s", number, pr.headRepo.Owner, pr.headRef)
	pr.mergeCommit = s.putCommit(s.buildTree(files), []string{base, head}, msg, is.author)
	pr.merged = true
	r.refs["heads/"+pr.baseRef] = pr.mergeCommit
}

// AddReview adds a review of the head commit: state APPROVED,
// CHANGES_REQUESTED or COMMENTED. It returns the review's id.
func (r *Repo) AddReview(number int, user, state string) int64 {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	pr := r.mustPR(number).pr
	rv := review{id: r.s.id(), user: user, state: state, commitID: pr.headRepo.refs["heads/"+pr.headRef], submitted: now()}
	pr.reviews = append(pr.reviews, rv)
	return rv.id
}

// SetMergeable sets what GitHub computed about merging: mergeable and
// mergeable_state (clean, dirty, blocked, behind, unstable, ...).
func (r *Repo) SetMergeable(number int, mergeable bool, state string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	pr := r.mustPR(number).pr
	pr.mergeable, pr.mergeableState = mergeable, state
}

func (s *Server) getPull(c *call) {
	is := c.repo.issues[int(c.intParam("pull_number"))]
	if is == nil || is.pr == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	c.json(http.StatusOK, c.repo.pullJSON(is))
}

func (s *Server) pullFiles(c *call) {
	is := c.repo.issues[int(c.intParam("pull_number"))]
	if is == nil || is.pr == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	head := is.pr.headRepo.refs["heads/"+is.pr.headRef]
	base := s.mergeBase(c.repo.refs["heads/"+is.pr.baseRef], head)
	if is.pr.merged {
		base = s.commitObj(is.pr.mergeCommit).parents[0]
	}
	c.page(c.diffFiles(base, head))
}

func (s *Server) pullReviews(c *call) {
	is := c.repo.issues[int(c.intParam("pull_number"))]
	if is == nil || is.pr == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	out := []any{}
	for _, rv := range is.pr.reviews {
		out = append(out, c.repo.reviewJSON(is, rv))
	}
	c.page(out)
}

func (s *Server) getIssue(c *call) {
	is := c.repo.issues[int(c.intParam("issue_number"))]
	if is == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	c.json(http.StatusOK, c.repo.issueJSON(is))
}
