package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/pull"
	"strata.dev/strata/report"
)

// discoverSyncs adds to cfg the syncs that Sync files define at ref, found
// with the default branch's sync_discovery (base): discovery itself is
// policy, so a PR cannot widen it. A sync file only ref has gives a
// Proposed sync (previewed, never hydrated into its destination nor taken
// over); one the default branch has too takes its Dest, Takeover and
// Validate from there, as config.Effective does for the syncs of
// .strata.yaml. Files that cannot be used are cfg.SyncFileProblems, each
// reported on its own: one team's broken file does not stop another's sync.
func (d *Deps) discoverSyncs(ctx context.Context, r pull.Repository, ref, defaultBranch string, base *config.Repo, cfg *RepoConfig) error {
	if base == nil || base.Discovery == nil {
		return nil
	}
	listed := cfg.Syncs
	head, err := discoverAt(ctx, r, ref, base.Discovery, listed)
	if err != nil {
		return err
	}
	found := head
	if defaultBranch != "" && defaultBranch != ref {
		if found, err = discoverAt(ctx, r, defaultBranch, base.Discovery, base.Syncs); err != nil {
			return fmt.Errorf("on the default branch %s: %w", defaultBranch, err)
		}
	}
	merged := config.Effective(&config.Repo{Syncs: found.Syncs}, &config.Repo{Syncs: head.Syncs}, d.Config.RepoPolicy())
	cfg.Repo.Syncs = append(append([]config.Sync(nil), listed...), merged.Syncs...)
	cfg.SyncFileProblems, cfg.SkippedSyncs = head.Problems, head.Skipped
	return nil
}

// discoverAt lists the tree at ref, reads the files the globs match (at
// most config.MaxSyncFiles) and decides which syncs they define.
func discoverAt(ctx context.Context, r pull.Repository, ref string, disc *config.SyncDiscovery, listed []config.Sync) (config.Discovered, error) {
	tree, err := r.Tree(ctx, ref)
	if err != nil {
		return config.Discovered{}, err
	}
	paths := disc.Candidates(tree)
	var over []config.SyncFileProblem
	if len(paths) > config.MaxSyncFiles {
		over = append(over, config.SyncFileProblem{RepoError: &config.RepoError{File: config.RepoFile, Line: disc.Line,
			Msg: fmt.Sprintf("sync_discovery matches %d files; Strata reads the first %d in path order (narrow the globs)", len(paths), config.MaxSyncFiles)}})
		paths = paths[:config.MaxSyncFiles]
	}
	files := make([]config.SyncFile, 0, len(paths))
	for _, p := range paths {
		data, err := r.File(ctx, ref, p)
		if errors.Is(err, pull.ErrNotFound) {
			continue // listed but not a file GitHub serves (a submodule)
		}
		if err != nil {
			return config.Discovered{}, err
		}
		files = append(files, config.SyncFile{Path: p, Data: data})
	}
	found := config.Discover(disc, config.RepoFile, listed, files, tree)
	found.Problems = append(over, found.Problems...)
	return found, nil
}

// syncEntry names a sync in /help: discovered ones with their file.
func syncEntry(s config.Sync) string {
	name := s.Name
	if s.File != "" {
		name += " (" + s.File + ")"
	}
	if s.Proposed {
		name += ", preview only until merged"
	}
	return name
}

// helpDiscovery says in /help which Sync files the selector left out and
// which could not be used, with their file and line.
func helpDiscovery(b *strings.Builder, cfg *RepoConfig) {
	if len(cfg.SkippedSyncs) > 0 {
		fmt.Fprintf(b, "**Sync files the selector leaves out:** %s\n\n", report.Names(cfg.SkippedSyncs))
	}
	if len(cfg.SyncFileProblems) > 0 {
		b.WriteString("**Sync files Strata cannot use:**\n\n")
		for _, p := range cfg.SyncFileProblems {
			b.WriteString("- " + markdown.Quote(p.Error()) + "\n")
		}
		b.WriteString("\n")
	}
}
