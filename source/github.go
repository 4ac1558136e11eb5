package source

import (
	"context"
	"fmt"

	"github.com/google/go-github/v60/github"
)

// GitHub is the production Archiver: it asks the GitHub API (with the
// installation's token) for the tarball link of a commit. The link is a
// short-lived pre-signed codeload URL, so the Fetcher downloads it with a
// plain client and the token never goes to another host.
type GitHub struct {
	Client *github.Client
}

// maxRedirects follows a renamed repository's 301 to its new name.
const maxRedirects = 3

func (g GitHub) ArchiveURL(ctx context.Context, owner, repo, sha string) (string, error) {
	u, _, err := g.Client.Repositories.GetArchiveLink(ctx, owner, repo, github.Tarball,
		&github.RepositoryContentGetOptions{Ref: sha}, maxRedirects)
	if err != nil {
		return "", fmt.Errorf("get tarball link of %s/%s@%s: %w", owner, repo, sha, err)
	}
	return u.String(), nil
}

var _ Archiver = GitHub{}
