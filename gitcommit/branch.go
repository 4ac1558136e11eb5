package gitcommit

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/go-github/v60/github"
)

// ErrNoBranch is a branch to start from that does not exist.
var ErrNoBranch = errors.New("branch does not exist")

// StartBranch creates dest.Branch at the tip of from when it does not exist
// yet, so that a staging branch shares history with the branch it is
// promoted into (a pull request needs that). It leaves an existing branch as
// it is, also one that another writer created meanwhile.
func (w Writer) StartBranch(ctx context.Context, dest Destination, from string) error {
	tip, err := branchTip(ctx, w.GitHub, dest)
	if err != nil || tip != "" {
		return err
	}
	base, err := branchTip(ctx, w.GitHub, Destination{Owner: dest.Owner, Repo: dest.Repo, Branch: from})
	if err != nil {
		return err
	}
	if base == "" {
		return fmt.Errorf("start %s from %s: %w", dest.Branch, from, ErrNoBranch)
	}
	ref := &github.Reference{Ref: github.String("refs/heads/" + dest.Branch), Object: &github.GitObject{SHA: github.String(base)}}
	if _, _, err := w.GitHub.Git.CreateRef(ctx, dest.Owner, dest.Repo, ref); err != nil && !isConflict(err) {
		return fmt.Errorf("create branch %s of %s/%s from %s: %w", dest.Branch, dest.Owner, dest.Repo, from, err)
	}
	return nil
}
