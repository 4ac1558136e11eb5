package store

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Modes of a state credential: a plan reads and locks, an apply also writes.
const (
	StateRead  = "read"
	StateWrite = "write"
)

// StateCredential is what a run's http-backend credential may do: one
// state (Key), for one run, in one mode. The token itself is never
// stored, only its SHA-256 (a token is 256 random bits, so a fast hash
// leaves nothing to guess).
type StateCredential struct {
	Key       StateKey
	RunID     int64
	Mode      string // StateRead or StateWrite
	CreatedAt time.Time
}

// HashStateToken is the digest a credential is stored and looked up by.
func HashStateToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// IssueStateCredential records a credential by its token's digest.
func (s *Store) IssueStateCredential(ctx context.Context, c StateCredential, tokenHash []byte) error {
	k := c.Key.norm()
	if c.Mode != StateRead && c.Mode != StateWrite {
		return fmt.Errorf("state credential mode %q: want %s or %s", c.Mode, StateRead, StateWrite)
	}
	_, err := s.exec(ctx, `INSERT INTO state_credentials (token_hash, repo, layer, workspace, run_id, mode, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?)`, tokenHash, k.Repo, k.Layer, k.Workspace, c.RunID, c.Mode, now())
	if err != nil {
		return fmt.Errorf("issue the state credential of run %d: %w", c.RunID, err)
	}
	return nil
}

// StateCredentialOf returns the credential whose token has this digest and
// whether it is live: its run is still running and holds the layer's slot.
// An unknown digest is ErrNotFound.
func (s *Store) StateCredentialOf(ctx context.Context, tokenHash []byte) (*StateCredential, bool, error) {
	var c StateCredential
	var stored []byte
	var created int64
	var running, slot int
	err := s.queryRow(ctx, `SELECT c.token_hash, c.repo, c.layer, c.workspace, c.run_id, c.mode, c.created_at,
		(SELECT count(*) FROM runs r WHERE r.id = c.run_id AND r.status = ?),
		(SELECT count(*) FROM layer_slots l WHERE l.repo = c.repo AND l.layer = c.layer AND l.run_id = c.run_id)
		FROM state_credentials c WHERE c.token_hash = ?`, RunRunning, tokenHash).
		Scan(&stored, &c.Key.Repo, &c.Key.Layer, &c.Key.Workspace, &c.RunID, &c.Mode, &created, &running, &slot)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, ErrNotFound
	}
	if err != nil {
		return nil, false, err
	}
	// The index found the row; the comparison that decides is constant time.
	if subtle.ConstantTimeCompare(stored, tokenHash) != 1 {
		return nil, false, ErrNotFound
	}
	c.CreatedAt = fromMillis(created)
	return &c, running == 1 && slot == 1, nil
}

// RevokeStateCredentials deletes a run's credentials (the run ended or
// released its slot).
func (s *Store) RevokeStateCredentials(ctx context.Context, runID int64) error {
	_, err := s.exec(ctx, `DELETE FROM state_credentials WHERE run_id = ?`, runID)
	return err
}
