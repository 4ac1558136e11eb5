package worker

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/config"
)

// RepoConfig is a repository's effective .strata.yaml at a commit.
type RepoConfig struct {
	*config.Repo
	// Present says whether either branch has the file.
	Present bool
}

// LoadRepoConfig reads .strata.yaml at ref and on the default branch, and
// returns the effective config: policy from the default branch only. A file
// that fails to parse or validate returns *config.RepoErrors (via errors.As).
func LoadRepoConfig(ctx context.Context, gh *github.Client, owner, repo, ref, defaultBranch string) (*RepoConfig, error) {
	head, err := readRepoConfig(ctx, gh, owner, repo, ref)
	if err != nil {
		return nil, err
	}
	base := head
	if defaultBranch != "" && defaultBranch != ref {
		if base, err = readRepoConfig(ctx, gh, owner, repo, defaultBranch); err != nil {
			return nil, fmt.Errorf("on the default branch %s: %w", defaultBranch, err)
		}
	}
	eff := config.Effective(base, head)
	if eff == nil {
		eff = &config.Repo{File: config.RepoFile, Version: 1}
	}
	if head != nil || base != nil {
		tree, err := treeAt(ctx, gh, owner, repo, ref)
		if err != nil {
			return nil, err
		}
		if err := eff.Validate(tree); err != nil {
			return nil, err
		}
	}
	return &RepoConfig{Repo: eff, Present: head != nil || base != nil}, nil
}

func readRepoConfig(ctx context.Context, gh *github.Client, owner, repo, ref string) (*config.Repo, error) {
	file, _, resp, err := gh.Repositories.GetContents(ctx, owner, repo, config.RepoFile, &github.RepositoryContentGetOptions{Ref: ref})
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s at %s: %w", config.RepoFile, ref, err)
	}
	if file == nil {
		return nil, fmt.Errorf("%s at %s is a directory", config.RepoFile, ref)
	}
	text, err := file.GetContent()
	if err != nil {
		return nil, fmt.Errorf("decode %s at %s: %w", config.RepoFile, ref, err)
	}
	return config.ParseRepo(config.RepoFile, []byte(text))
}

// gitTree answers path questions from one recursive Git tree listing.
type gitTree map[string]bool // path -> is a directory

func (t gitTree) Stat(p string) (bool, bool, error) {
	p = strings.Trim(path.Clean(p), "/")
	if p == "." || p == "" {
		return true, true, nil
	}
	isDir, ok := t[p]
	return isDir, ok, nil
}

func treeAt(ctx context.Context, gh *github.Client, owner, repo, ref string) (gitTree, error) {
	tree, _, err := gh.Git.GetTree(ctx, owner, repo, ref, true)
	if err != nil {
		return nil, fmt.Errorf("list the tree of %s/%s at %s: %w", owner, repo, ref, err)
	}
	if tree.GetTruncated() {
		return nil, errors.New("the repository tree is too large for GitHub to list; paths in .strata.yaml cannot be checked")
	}
	t := gitTree{}
	for _, e := range tree.Entries {
		t[e.GetPath()] = e.GetType() == "tree"
	}
	return t, nil
}
