package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// SyncHydration is the last hydration of a sync from the default branch.
type SyncHydration struct {
	Repo           string // the source repository, owner/name
	Sync           string
	InstallationID int64
	// Spec is the sync's config as hydrated (JSON, the worker's to read).
	Spec string
	// Inputs are the files kustomize read and the directories it listed.
	Inputs       []string
	SourceCommit string
	Pinned       []PinnedImage
	DestCommit   string // "" when the hydration changed nothing
	HydratedAt   time.Time
	// FailedCommit is a later commit whose build failed, "" when none: the
	// next push hydrates the sync whatever it changes.
	FailedCommit string
}

// PinnedImage is an image tag resolved to a digest at hydration time.
type PinnedImage struct {
	Name   string `json:"name"`
	Tag    string `json:"tag"`
	Digest string `json:"digest"`
}

const syncColumns = `repo, sync, installation_id, spec, inputs, source_commit, pinned, dest_commit, hydrated_at, failed_commit`

func scanSync(row interface{ Scan(...any) error }) (*SyncHydration, error) {
	var h SyncHydration
	var inputs, pinned string
	var at int64
	if err := row.Scan(&h.Repo, &h.Sync, &h.InstallationID, &h.Spec, &inputs, &h.SourceCommit, &pinned, &h.DestCommit, &at, &h.FailedCommit); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(inputs), &h.Inputs); err != nil {
		return nil, fmt.Errorf("inputs of sync %s %s: %w", h.Repo, h.Sync, err)
	}
	if err := json.Unmarshal([]byte(pinned), &h.Pinned); err != nil {
		return nil, fmt.Errorf("pinned images of sync %s %s: %w", h.Repo, h.Sync, err)
	}
	h.HydratedAt = fromMillis(at)
	return &h, nil
}

// RecordHydration keeps h as the sync's last hydration.
func (s *Store) RecordHydration(ctx context.Context, h SyncHydration) error {
	if h.Inputs == nil {
		h.Inputs = []string{}
	}
	if h.Pinned == nil {
		h.Pinned = []PinnedImage{}
	}
	inputs, err := json.Marshal(h.Inputs)
	if err != nil {
		return err
	}
	pinned, err := json.Marshal(h.Pinned)
	if err != nil {
		return err
	}
	_, err = s.exec(ctx, `INSERT INTO sync_hydrations (`+syncColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, '')
		ON CONFLICT (repo, sync) DO UPDATE SET installation_id = excluded.installation_id, spec = excluded.spec,
		inputs = excluded.inputs, source_commit = excluded.source_commit, pinned = excluded.pinned,
		dest_commit = excluded.dest_commit, hydrated_at = excluded.hydrated_at, failed_commit = ''`,
		h.Repo, h.Sync, h.InstallationID, h.Spec, string(inputs), h.SourceCommit, string(pinned), h.DestCommit, now())
	if err != nil {
		return fmt.Errorf("record hydration of %s %s: %w", h.Repo, h.Sync, err)
	}
	return nil
}

// RecordFailedBuild notes that the sync's build failed at commit, keeping the
// inputs of its last good hydration. A sync never hydrated has nothing to keep:
// its next push hydrates it anyway.
func (s *Store) RecordFailedBuild(ctx context.Context, repo, sync, commit string) error {
	_, err := s.exec(ctx, `UPDATE sync_hydrations SET failed_commit = ? WHERE repo = ? AND sync = ?`, commit, repo, sync)
	return err
}

// SyncHydration returns the last hydration of a sync, or ErrNotFound.
func (s *Store) SyncHydration(ctx context.Context, repo, sync string) (*SyncHydration, error) {
	h, err := scanSync(s.queryRow(ctx, `SELECT `+syncColumns+` FROM sync_hydrations WHERE repo = ? AND sync = ?`, repo, sync))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return h, err
}

// PinnedSyncs lists the last hydrations that pinned at least one image, for
// the moved-tag job.
func (s *Store) PinnedSyncs(ctx context.Context) ([]*SyncHydration, error) {
	return queryAll(ctx, s, scanSync, `SELECT `+syncColumns+` FROM sync_hydrations WHERE pinned <> '[]' ORDER BY repo, sync`)
}
