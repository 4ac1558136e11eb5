package store

import (
	"context"
	"fmt"
)

// MoveSourceCommit notes that the default branch's commit sha hydrates sync
// to what its destination holds already (the push changed none of its
// inputs): the record's source commit moves to sha, and its destination
// commit stays the one that holds the output. A sync whose last build
// failed keeps its record: its next push hydrates it.
func (s *Store) MoveSourceCommit(ctx context.Context, repo, sync, sha string) error {
	_, err := s.exec(ctx, `UPDATE sync_hydrations SET source_commit = ? WHERE repo = ? AND sync = ? AND failed_commit = ''`, sha, repo, sync)
	if err != nil {
		return fmt.Errorf("move the source commit of %s %s: %w", repo, sync, err)
	}
	return nil
}

// SyncHydrationsOf lists the last hydration of each sync of repo, by name,
// for the web UI.
func (s *Store) SyncHydrationsOf(ctx context.Context, repo string) ([]*SyncHydration, error) {
	return queryAll(ctx, s, scanSync, `SELECT `+syncColumns+` FROM sync_hydrations WHERE repo = ? ORDER BY sync`, repo)
}
