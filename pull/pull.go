// Package pull is what Strata knows of a pull request and its repository,
// behind interfaces: decisions are pure functions of these facts (table
// tests fill a pulltest fake), and one GitHub implementation reads them,
// every page of every list, once per job.
package pull

import (
	"context"
	"errors"
	"path"
	"strings"
	"time"
)

// ErrNotFound is returned for a file, ref or commit that does not exist.
var ErrNotFound = errors.New("not found")

// Permission is a user's role on a repository, as GitHub's collaborator
// permission API names it (its role_name knows triage and maintain).
type Permission string

const (
	None     Permission = "none"
	Read     Permission = "read"
	Triage   Permission = "triage"
	Write    Permission = "write"
	Maintain Permission = "maintain"
	Admin    Permission = "admin"
)

// Permissions are the roles, lowest first.
var Permissions = []Permission{None, Read, Triage, Write, Maintain, Admin}

func (p Permission) rank() int {
	for i, q := range Permissions {
		if p == q {
			return i
		}
	}
	return 0
}

// AtLeast reports whether p is least or a higher role. An unknown role is
// none.
func (p Permission) AtLeast(least Permission) bool { return p.rank() >= least.rank() }

// Valid reports whether p is one of GitHub's roles.
func (p Permission) Valid() bool {
	for _, q := range Permissions {
		if p == q {
			return true
		}
	}
	return false
}

// Review is a submitted review.
type Review struct {
	Author string
	// State is GitHub's: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED.
	State string
	// CommitID is the head the review was given on.
	CommitID  string
	Submitted time.Time
}

// Status is a check run or commit status on the head, by its name and its
// outcome: a check run's conclusion ("" while it runs) or a status's state.
type Status struct {
	Name    string
	Outcome string
}

// Comment is a comment on the PR's conversation.
type Comment struct {
	ID     int64
	Author string
	Body   string
}

// Comparison is what GitHub's compare of two commits says.
type Comparison struct {
	// Status: ahead, behind, diverged or identical (head against base).
	Status    string
	AheadBy   int
	BehindBy  int
	MergeBase string
	// Files changed, renamed files under both names, every page.
	Files []string
}

// Tree answers path questions about a commit's tree: is it there, is it a
// directory (config.Tree).
type Tree map[string]bool

// Stat says whether p is a directory and whether it exists.
func (t Tree) Stat(p string) (bool, bool, error) {
	p = strings.Trim(path.Clean(p), "/")
	if p == "." || p == "" {
		return true, true, nil
	}
	isDir, ok := t[p]
	return isDir, ok, nil
}

// Repository reads a repository's files and branches.
type Repository interface {
	// FullName is "owner/name".
	FullName() string
	// File is the content of path at ref, ErrNotFound when absent.
	File(ctx context.Context, ref, path string) ([]byte, error)
	// Tree lists the tree at ref.
	Tree(ctx context.Context, ref string) (Tree, error)
	// BranchHead is the commit a branch points at; branch "" is the
	// default branch, whose name is returned.
	BranchHead(ctx context.Context, branch string) (sha, name string, err error)
	// Compare compares two commits (or refs) without listing the files;
	// ErrNotFound when GitHub cannot relate them.
	Compare(ctx context.Context, base, head string) (*Comparison, error)
	// CompareFiles is Compare with every changed file listed.
	CompareFiles(ctx context.Context, base, head string) (*Comparison, error)
	// Permission is user's role on the repository; None for strangers.
	Permission(ctx context.Context, user string) (Permission, error)
	// TeamMembers are the logins of a team of the organization org, by its
	// slug, members of its child teams included; ErrNotFound when the
	// team does not exist or the App cannot see it.
	TeamMembers(ctx context.Context, org, slug string) ([]string, error)
}

// Context is one pull request, as Strata's decisions see it.
type Context interface {
	Repository
	Number() int
	HeadSHA() string
	// HeadRepo is the full name of the repository the head lives in.
	HeadRepo() string
	BaseRef() string
	DefaultBranch() string
	Open() bool
	// Fork reports whether the head lives in another repository.
	Fork() bool
	Author() string
	URL() string
	// Conflicts reports whether GitHub says the PR does not merge cleanly.
	Conflicts() bool
	Reviews(ctx context.Context) ([]Review, error)
	// Statuses are the check runs and commit statuses on the head.
	Statuses(ctx context.Context) ([]Status, error)
	// BehindBy counts the commits of the base branch the head lacks.
	BehindBy(ctx context.Context) (int, error)
	// ChangedFiles lists the PR's files; a rename under both names.
	ChangedFiles(ctx context.Context) ([]string, error)
	Comments(ctx context.Context) ([]Comment, error)
}
