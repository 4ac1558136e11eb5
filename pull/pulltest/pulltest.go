// Package pulltest is a pull.Context filled by hand, for table tests of
// decisions: set the facts a case needs, leave the rest zero.
package pulltest

import (
	"context"

	"strata.dev/strata/pull"
)

// Context is a pull request and its repository as plain values. Errors set
// in the *Err fields are returned by the matching method.
type Context struct {
	Repo          string // owner/name; "acme/infra" when empty
	NumberValue   int
	Head          string
	HeadRepoValue string // the PR's repo when empty: not a fork
	Base          string
	Default       string // default branch; "main" when empty
	Closed        bool
	AuthorValue   string
	URLValue      string
	ConflictValue bool

	// PermissionsValue is each user's role; a user not listed has none.
	PermissionsValue map[string]pull.Permission
	ReviewsValue     []pull.Review
	StatusesValue    []pull.Status
	BehindByValue    int
	Files            []string
	CommentsValue    []pull.Comment
	// FileContents maps "ref:path" to content; a missing key is not found.
	FileContents map[string]string
	TreeValue    pull.Tree
	// Branches maps a branch name to its head commit.
	Branches    map[string]string
	Comparisons map[string]*pull.Comparison // "base...head"
	// Teams maps "org/slug" to the team's members; a missing key is not
	// found.
	Teams map[string][]string

	PermissionErr, ReviewsErr, StatusesErr, BehindByErr, FilesErr, TeamsErr error
}

func (c *Context) FullName() string {
	if c.Repo == "" {
		return "acme/infra"
	}
	return c.Repo
}
func (c *Context) Number() int     { return c.NumberValue }
func (c *Context) HeadSHA() string { return c.Head }
func (c *Context) HeadRepo() string {
	if c.HeadRepoValue == "" {
		return c.FullName()
	}
	return c.HeadRepoValue
}
func (c *Context) BaseRef() string {
	if c.Base == "" {
		return c.DefaultBranch()
	}
	return c.Base
}
func (c *Context) DefaultBranch() string {
	if c.Default == "" {
		return "main"
	}
	return c.Default
}
func (c *Context) Open() bool      { return !c.Closed }
func (c *Context) Fork() bool      { return c.HeadRepo() != c.FullName() }
func (c *Context) Author() string  { return c.AuthorValue }
func (c *Context) URL() string     { return c.URLValue }
func (c *Context) Conflicts() bool { return c.ConflictValue }

func (c *Context) Permission(_ context.Context, user string) (pull.Permission, error) {
	if c.PermissionErr != nil {
		return pull.None, c.PermissionErr
	}
	if p, ok := c.PermissionsValue[user]; ok {
		return p, nil
	}
	return pull.None, nil
}

func (c *Context) TeamMembers(_ context.Context, org, slug string) ([]string, error) {
	if c.TeamsErr != nil {
		return nil, c.TeamsErr
	}
	if m, ok := c.Teams[org+"/"+slug]; ok {
		return m, nil
	}
	return nil, pull.ErrNotFound
}

func (c *Context) Reviews(context.Context) ([]pull.Review, error) {
	return c.ReviewsValue, c.ReviewsErr
}

func (c *Context) Statuses(context.Context) ([]pull.Status, error) {
	return c.StatusesValue, c.StatusesErr
}

func (c *Context) BehindBy(context.Context) (int, error) { return c.BehindByValue, c.BehindByErr }

func (c *Context) ChangedFiles(context.Context) ([]string, error) { return c.Files, c.FilesErr }

func (c *Context) Comments(context.Context) ([]pull.Comment, error) { return c.CommentsValue, nil }

func (c *Context) File(_ context.Context, ref, path string) ([]byte, error) {
	if s, ok := c.FileContents[ref+":"+path]; ok {
		return []byte(s), nil
	}
	return nil, pull.ErrNotFound
}

func (c *Context) Tree(context.Context, string) (pull.Tree, error) {
	if c.TreeValue == nil {
		return pull.Tree{}, nil
	}
	return c.TreeValue, nil
}

func (c *Context) BranchHead(_ context.Context, branch string) (string, string, error) {
	if branch == "" {
		branch = c.DefaultBranch()
	}
	if sha, ok := c.Branches[branch]; ok {
		return sha, branch, nil
	}
	return "", branch, pull.ErrNotFound
}

// CompareFiles answers from Comparisons, as Compare does.
func (c *Context) CompareFiles(ctx context.Context, base, head string) (*pull.Comparison, error) {
	return c.Compare(ctx, base, head)
}

func (c *Context) Compare(_ context.Context, base, head string) (*pull.Comparison, error) {
	if cmp, ok := c.Comparisons[base+"..."+head]; ok {
		return cmp, nil
	}
	return nil, pull.ErrNotFound
}

var _ pull.Context = (*Context)(nil)
