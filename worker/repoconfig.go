package worker

import (
	"context"
	"errors"
	"fmt"

	"strata.dev/strata/config"
	"strata.dev/strata/pull"
)

// RepoConfig is a repository's effective .strata.yaml at a commit.
type RepoConfig struct {
	*config.Repo
	// Present says whether either branch has the file.
	Present bool
	// SyncFileProblems are the Sync files discovery could not use, and
	// SkippedSyncs ("name (file)") those its selector left out
	// (discover.go).
	SyncFileProblems []config.SyncFileProblem
	SkippedSyncs     []string
}

// LoadRepoConfig reads .strata.yaml at ref and on the default branch, and
// returns the effective config: policy from the default branch only, and
// the server's for what only ref defines (config.Effective). A file that
// fails to parse or validate returns *config.RepoErrors (via errors.As).
func (d *Deps) LoadRepoConfig(ctx context.Context, r pull.Repository, ref, defaultBranch string) (*RepoConfig, error) {
	head, err := ReadRepoConfig(ctx, r, ref)
	if err != nil {
		return nil, err
	}
	base := head
	if defaultBranch != "" && defaultBranch != ref {
		if base, err = ReadRepoConfig(ctx, r, defaultBranch); err != nil {
			return nil, fmt.Errorf("on the default branch %s: %w", defaultBranch, err)
		}
	}
	eff := config.Effective(base, head, d.Config.RepoPolicy())
	if eff == nil {
		eff = &config.Repo{File: config.RepoFile, Version: 1}
	}
	if head != nil || base != nil {
		tree, err := r.Tree(ctx, ref)
		if err != nil {
			return nil, err
		}
		if err := eff.Validate(tree); err != nil {
			return nil, err
		}
	}
	cfg := &RepoConfig{Repo: eff, Present: head != nil || base != nil}
	if err := d.discoverSyncs(ctx, r, ref, defaultBranch, base, cfg); err != nil {
		return nil, err
	}
	return cfg, nil
}

// ReadRepoConfig reads .strata.yaml as it is at ref, nil when absent.
func ReadRepoConfig(ctx context.Context, r pull.Repository, ref string) (*config.Repo, error) {
	text, err := r.File(ctx, ref, config.RepoFile)
	if errors.Is(err, pull.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return config.ParseRepo(config.RepoFile, text)
}
