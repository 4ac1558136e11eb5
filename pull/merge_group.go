package pull

import (
	"context"
	"fmt"

	"github.com/google/go-github/v60/github"
)

// What a merge queue's group is made of, as GitHub's REST API tells it: the
// commits the group adds to its base (compare) and the pull requests GitHub
// associates with a commit.

// MaxGroupCommits bounds the commits of a group that are read: GitHub's
// compare lists at most 250 commits.
const MaxGroupCommits = 250

// Commit is a commit and its parents, first parent first.
type Commit struct {
	SHA     string
	Parents []string
}

// CommitPull is a pull request GitHub associates with a commit.
type CommitPull struct {
	Number  int
	State   string // open, closed
	HeadSHA string
	BaseRef string
}

// Commits lists the commits of head that base lacks, oldest first, at most
// MaxGroupCommits; more says there were more than that.
func (r *GitHubRepo) Commits(ctx context.Context, base, head string) (out []Commit, more bool, err error) {
	opts := &github.ListOptions{PerPage: 100}
	for {
		cmp, resp, err := r.gh.Repositories.CompareCommits(ctx, r.owner, r.name, base, head, opts)
		if notFound(resp) {
			return nil, false, fmt.Errorf("compare %s...%s in %s: %w", short(base), short(head), r.FullName(), ErrNotFound)
		}
		if err != nil {
			return nil, false, fmt.Errorf("compare %s...%s in %s: %w", short(base), short(head), r.FullName(), err)
		}
		for _, c := range cmp.Commits {
			cm := Commit{SHA: c.GetSHA()}
			for _, p := range c.Parents {
				cm.Parents = append(cm.Parents, p.GetSHA())
			}
			out = append(out, cm)
		}
		if len(out) >= MaxGroupCommits || cmp.GetTotalCommits() > MaxGroupCommits {
			return out, true, nil
		}
		if resp.NextPage == 0 {
			return out, false, nil
		}
		opts.Page = resp.NextPage
	}
}

// PullsOfCommit lists the pull requests GitHub associates with a commit:
// for a commit not on the default branch, the open ones whose head holds it.
func (r *GitHubRepo) PullsOfCommit(ctx context.Context, sha string) ([]CommitPull, error) {
	var out []CommitPull
	err := EachPage(func(opts *github.ListOptions) (*github.Response, error) {
		page, resp, err := r.gh.PullRequests.ListPullRequestsWithCommit(ctx, r.owner, r.name, sha, opts)
		for _, p := range page {
			out = append(out, CommitPull{Number: p.GetNumber(), State: p.GetState(), HeadSHA: p.GetHead().GetSHA(), BaseRef: p.GetBase().GetRef()})
		}
		return resp, err
	})
	if err != nil {
		return nil, fmt.Errorf("pull requests of %s in %s: %w", short(sha), r.FullName(), err)
	}
	return out, nil
}
