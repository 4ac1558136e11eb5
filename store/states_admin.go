package store

import "context"

// What the web UI's layer page reads of a layer's managed state: which
// workspaces have one, and the state locks held on any of them.

// StateWorkspaces lists the workspaces of a layer that have state versions
// or a state lock, sorted.
func (s *Store) StateWorkspaces(ctx context.Context, repo, layer string) ([]string, error) {
	return queryAll(ctx, s, scanString, `SELECT workspace FROM state_versions WHERE repo = ? AND layer = ?
		UNION SELECT workspace FROM state_locks WHERE repo = ? AND layer = ? ORDER BY 1`, repo, layer, repo, layer)
}

// StateLocksOfLayer lists the state locks held on a layer, one per
// workspace at most, by workspace.
func (s *Store) StateLocksOfLayer(ctx context.Context, repo, layer string) ([]*StateLock, error) {
	return queryAll(ctx, s, scanStateLock, `SELECT `+stateLockColumns+` FROM state_locks WHERE repo = ? AND layer = ? ORDER BY workspace`, repo, layer)
}
