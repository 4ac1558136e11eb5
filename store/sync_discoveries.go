package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SyncDiscovery is what the default branch's syncs were at its last pushed
// commit: where each is defined, and the Sync files discovery did not use.
type SyncDiscovery struct {
	Repo   string
	Commit string
	Syncs  []DefinedSync
	// Skipped are "name (file)" of the Sync files the selector left out.
	Skipped  []string
	Problems []SyncFileProblem
	At       time.Time
}

// DefinedSync is a sync and the file that defines it: "" for .strata.yaml.
type DefinedSync struct {
	Name string `json:"name"`
	File string `json:"file,omitempty"`
}

// SyncFileProblem is a Sync file discovery could not use: where, and why.
type SyncFileProblem struct {
	Sync    string `json:"sync,omitempty"`
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// RecordSyncDiscovery keeps d as what the repository's default branch
// defines, replacing what an earlier push recorded.
func (s *Store) RecordSyncDiscovery(ctx context.Context, d SyncDiscovery) error {
	if d.Syncs == nil {
		d.Syncs = []DefinedSync{}
	}
	if d.Skipped == nil {
		d.Skipped = []string{}
	}
	if d.Problems == nil {
		d.Problems = []SyncFileProblem{}
	}
	syncs, err := json.Marshal(d.Syncs)
	if err != nil {
		return err
	}
	skipped, err := json.Marshal(d.Skipped)
	if err != nil {
		return err
	}
	problems, err := json.Marshal(d.Problems)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `INSERT INTO sync_discoveries (repo, commit_sha, syncs, skipped, problems, updated_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (repo) DO UPDATE SET commit_sha = excluded.commit_sha, syncs = excluded.syncs, skipped = excluded.skipped,
		problems = excluded.problems, updated_at = excluded.updated_at`,
		d.Repo, d.Commit, string(syncs), string(skipped), string(problems), now())
	if err != nil {
		return fmt.Errorf("record the syncs of %s at %s: %w", d.Repo, d.Commit, err)
	}
	return nil
}

// SyncDiscoveryOf returns what RecordSyncDiscovery kept of repo, or
// ErrNotFound when no push was seen since.
func (s *Store) SyncDiscoveryOf(ctx context.Context, repo string) (*SyncDiscovery, error) {
	d := SyncDiscovery{Repo: repo}
	var syncs, skipped, problems string
	var at int64
	err := s.queryRow(ctx, `SELECT commit_sha, syncs, skipped, problems, updated_at FROM sync_discoveries WHERE repo = ?`, repo).
		Scan(&d.Commit, &syncs, &skipped, &problems, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read the syncs of %s: %w", repo, err)
	}
	for _, f := range []struct {
		raw string
		to  any
	}{{syncs, &d.Syncs}, {skipped, &d.Skipped}, {problems, &d.Problems}} {
		if err := json.Unmarshal([]byte(f.raw), f.to); err != nil {
			return nil, fmt.Errorf("the syncs of %s: %w", repo, err)
		}
	}
	d.At = fromMillis(at)
	return &d, nil
}
