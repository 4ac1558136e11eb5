package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Takeover is a PR's hold on a sync's destination: one row per repo and
// sync, until ExpiresAt. While it exists, pushes to the default branch do not
// hydrate the sync. The `strata/takeover: SYNC` check on the holder's head
// mirrors it.
type Takeover struct {
	Repo           string
	Sync           string
	PR             int
	Holder         string // the user who took it over
	HeadSHA        string // the PR head hydrated into the destination
	StartedAt      time.Time
	ExpiresAt      time.Time
	CheckRunID     int64
	InstallationID int64
}

const takeoverColumns = `repo, sync, pr, holder, head_sha, started_at, expires_at, check_run_id, installation_id`

func scanTakeover(row interface{ Scan(...any) error }) (*Takeover, error) {
	var t Takeover
	var started, expires int64
	if err := row.Scan(&t.Repo, &t.Sync, &t.PR, &t.Holder, &t.HeadSHA, &started, &expires, &t.CheckRunID, &t.InstallationID); err != nil {
		return nil, err
	}
	t.StartedAt, t.ExpiresAt = fromMillis(started), fromMillis(expires)
	return &t, nil
}

// TryTakeover takes the sync for t.PR until t.ExpiresAt, or returns the
// takeover another PR holds. The PR that already holds it gets the new head,
// holder and expiry. The insert is the claim: across replicas one PR wins.
func (s *Store) TryTakeover(ctx context.Context, t Takeover) (held *Takeover, acquired bool, err error) {
	_, err = s.exec(ctx, `INSERT INTO takeovers (`+takeoverColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?)
		ON CONFLICT (repo, sync) DO NOTHING`,
		t.Repo, t.Sync, t.PR, t.Holder, t.HeadSHA, now(), t.ExpiresAt.UnixMilli(), t.InstallationID)
	if err != nil {
		return nil, false, fmt.Errorf("take over %s %s for #%d: %w", t.Repo, t.Sync, t.PR, err)
	}
	cur, err := s.Takeover(ctx, t.Repo, t.Sync)
	if errors.Is(err, ErrNotFound) {
		return s.TryTakeover(ctx, t) // ended between the insert and the read
	}
	if err != nil {
		return nil, false, err
	}
	if cur.PR != t.PR {
		return cur, false, nil
	}
	if _, err := s.exec(ctx, `UPDATE takeovers SET holder = ?, head_sha = ?, expires_at = ? WHERE repo = ? AND sync = ? AND pr = ?`,
		t.Holder, t.HeadSHA, t.ExpiresAt.UnixMilli(), t.Repo, t.Sync, t.PR); err != nil {
		return nil, false, err
	}
	cur.Holder, cur.HeadSHA, cur.ExpiresAt = t.Holder, t.HeadSHA, fromMillis(t.ExpiresAt.UnixMilli())
	return cur, true, nil
}

// Takeover returns the takeover of a sync, or ErrNotFound.
func (s *Store) Takeover(ctx context.Context, repo, sync string) (*Takeover, error) {
	t, err := scanTakeover(s.queryRow(ctx, `SELECT `+takeoverColumns+` FROM takeovers WHERE repo = ? AND sync = ?`, repo, sync))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return t, err
}

// TakeoversOfPR lists the syncs a PR holds, by sync.
func (s *Store) TakeoversOfPR(ctx context.Context, repo string, pr int) ([]*Takeover, error) {
	rows, err := s.query(ctx, `SELECT `+takeoverColumns+` FROM takeovers WHERE repo = ? AND pr = ? ORDER BY sync`, repo, pr)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Takeover
	for rows.Next() {
		t, err := scanTakeover(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// SetTakeoverCheck records the check that mirrors a takeover on headSHA, if
// the PR still holds it.
func (s *Store) SetTakeoverCheck(ctx context.Context, repo, sync string, pr int, headSHA string, checkRunID int64) error {
	_, err := s.exec(ctx, `UPDATE takeovers SET head_sha = ?, check_run_id = ? WHERE repo = ? AND sync = ? AND pr = ?`,
		headSHA, checkRunID, repo, sync, pr)
	return err
}

// EndTakeover ends a PR's takeover of a sync and returns it, or nil when the
// PR did not hold it.
func (s *Store) EndTakeover(ctx context.Context, repo, sync string, pr int) (*Takeover, error) {
	return s.endTakeover(ctx, `repo = ? AND sync = ? AND pr = ?`, repo, sync, pr)
}

// ExpireTakeover ends a PR's takeover of a sync if it has expired at now,
// and returns it; nil when the PR does not hold it or holds it longer (it
// was extended after the expiry was scheduled).
func (s *Store) ExpireTakeover(ctx context.Context, repo, sync string, pr int, at time.Time) (*Takeover, error) {
	return s.endTakeover(ctx, `repo = ? AND sync = ? AND pr = ? AND expires_at <= ?`, repo, sync, pr, at.UnixMilli())
}

func (s *Store) endTakeover(ctx context.Context, where string, args ...any) (*Takeover, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	t, err := scanTakeover(tx.QueryRowContext(ctx, s.rebind(`SELECT `+takeoverColumns+` FROM takeovers WHERE `+where), args...))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM takeovers WHERE `+where), args...); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("end takeover of %s %s by #%d: %w", t.Repo, t.Sync, t.PR, err)
	}
	return t, nil
}
