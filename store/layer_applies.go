package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// LayerApplied is the last apply of a layer: its generation counts the
// applies, and a plan made at a lower generation was made before it.
type LayerApplied struct {
	Generation int64
	PR         int
	HeadSHA    string
	AppliedAt  time.Time
}

// LastApply returns the layer's last apply, zero when it was never applied.
func (s *Store) LastApply(ctx context.Context, repo, layer string) (LayerApplied, error) {
	var a LayerApplied
	var at int64
	err := s.queryRow(ctx, `SELECT generation, pr, head_sha, applied_at FROM layer_applies WHERE repo = ? AND layer = ?`,
		repo, layer).Scan(&a.Generation, &a.PR, &a.HeadSHA, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return LayerApplied{}, nil
	}
	if err != nil {
		return LayerApplied{}, fmt.Errorf("last apply of %s %s: %w", repo, layer, err)
	}
	a.AppliedAt = fromMillis(at)
	return a, nil
}

// moveGeneration records an apply of the layer by pr, within MarkApplied's
// transaction.
func (s *Store) moveGeneration(ctx context.Context, tx *sql.Tx, repo, layer string, pr int, headSHA string) error {
	_, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO layer_applies (repo, layer, generation, pr, head_sha, applied_at) VALUES (?, ?, 1, ?, ?, ?)
		ON CONFLICT (repo, layer) DO UPDATE SET generation = layer_applies.generation + 1, pr = excluded.pr,
		head_sha = excluded.head_sha, applied_at = excluded.applied_at`), repo, layer, pr, headSHA, now())
	if err != nil {
		return fmt.Errorf("record the apply of %s %s by #%d: %w", repo, layer, pr, err)
	}
	return nil
}

// UnappliedPlansOf lists the plans of a layer that are not applied, of
// every PR and head, without their plan files: those an apply of the
// layer makes stale.
func (s *Store) UnappliedPlansOf(ctx context.Context, repo, layer string) ([]*Plan, error) {
	return s.queryPlans(ctx, `SELECT `+planColumns+` FROM plans WHERE repo = ? AND layer = ? AND applied_at = 0 ORDER BY pr, created_at`, repo, layer)
}

// DropLock releases a lock an /apply of pr took moments ago and did not use
// (another of its layers was locked by another PR): unlike Unlock, the PR's
// plans stay.
func (s *Store) DropLock(ctx context.Context, repo, layer string, pr int) error {
	_, err := s.exec(ctx, `DELETE FROM locks WHERE repo = ? AND layer = ? AND pr = ?`, repo, layer, pr)
	return err
}
