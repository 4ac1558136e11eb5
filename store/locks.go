package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Lock is a PR's hold on a layer: one row per repo and layer. The
// `strata/lock: LAYER` check on the holder's head mirrors it.
type Lock struct {
	Repo           string
	Layer          string
	PR             int
	HeadSHA        string
	Holder         string // the user whose plan took it
	LockedAt       time.Time
	CheckRunID     int64
	InstallationID int64
}

const lockColumns = `repo, layer, pr, head_sha, holder, locked_at, check_run_id, installation_id`

func scanLock(row interface{ Scan(...any) error }) (*Lock, error) {
	var l Lock
	var at int64
	if err := row.Scan(&l.Repo, &l.Layer, &l.PR, &l.HeadSHA, &l.Holder, &at, &l.CheckRunID, &l.InstallationID); err != nil {
		return nil, err
	}
	l.LockedAt = fromMillis(at)
	return &l, nil
}

// TryLock takes the layer's lock for l.PR, or returns the lock another PR
// holds. A PR that already holds it keeps it (its head is updated). The
// insert is the claim: with several replicas only one PR wins.
func (s *Store) TryLock(ctx context.Context, l Lock) (held *Lock, acquired bool, err error) {
	_, err = s.exec(ctx, `INSERT INTO locks (`+lockColumns+`) VALUES (?, ?, ?, ?, ?, ?, 0, ?)
		ON CONFLICT (repo, layer) DO NOTHING`, l.Repo, l.Layer, l.PR, l.HeadSHA, l.Holder, now(), l.InstallationID)
	if err != nil {
		return nil, false, fmt.Errorf("lock %s %s for #%d: %w", l.Repo, l.Layer, l.PR, err)
	}
	cur, err := s.Lock(ctx, l.Repo, l.Layer)
	if errors.Is(err, ErrNotFound) {
		// Released between the insert and the read: try again.
		return s.TryLock(ctx, l)
	}
	if err != nil {
		return nil, false, err
	}
	if cur.PR != l.PR {
		return cur, false, nil
	}
	if cur.HeadSHA != l.HeadSHA {
		if _, err := s.exec(ctx, `UPDATE locks SET head_sha = ? WHERE repo = ? AND layer = ? AND pr = ?`,
			l.HeadSHA, l.Repo, l.Layer, l.PR); err != nil {
			return nil, false, err
		}
	}
	return cur, true, nil
}

// Lock returns the lock of a layer, or ErrNotFound.
func (s *Store) Lock(ctx context.Context, repo, layer string) (*Lock, error) {
	l, err := scanLock(s.queryRow(ctx, `SELECT `+lockColumns+` FROM locks WHERE repo = ? AND layer = ?`, repo, layer))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return l, err
}

// LocksOfPR lists the locks a PR holds, by layer.
func (s *Store) LocksOfPR(ctx context.Context, repo string, pr int) ([]*Lock, error) {
	return s.locks(ctx, `SELECT `+lockColumns+` FROM locks WHERE repo = ? AND pr = ? ORDER BY layer`, repo, pr)
}

// AllLocks lists every lock, for the start-up repair of lock checks.
func (s *Store) AllLocks(ctx context.Context) ([]*Lock, error) {
	return s.locks(ctx, `SELECT `+lockColumns+` FROM locks ORDER BY repo, layer`)
}

func (s *Store) locks(ctx context.Context, q string, args ...any) ([]*Lock, error) {
	return queryAll(ctx, s, scanLock, q, args...)
}

// SetLockCheck records the check that mirrors a lock on headSHA, if the PR
// still holds it.
func (s *Store) SetLockCheck(ctx context.Context, repo, layer string, pr int, headSHA string, checkRunID int64) error {
	_, err := s.exec(ctx, `UPDATE locks SET head_sha = ?, check_run_id = ? WHERE repo = ? AND layer = ? AND pr = ?`,
		headSHA, checkRunID, repo, layer, pr)
	return err
}

// Unlock releases a PR's lock on a layer and discards the PR's plans of it,
// in one transaction. It returns the released lock, or nil when the PR did
// not hold it.
func (s *Store) Unlock(ctx context.Context, repo, layer string, pr int) (*Lock, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	l, err := scanLock(tx.QueryRowContext(ctx, s.rebind(`SELECT `+lockColumns+` FROM locks WHERE repo = ? AND layer = ? AND pr = ?`), repo, layer, pr))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM locks WHERE repo = ? AND layer = ? AND pr = ?`), repo, layer, pr); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM plans WHERE repo = ? AND layer = ? AND pr = ? AND applied_at = 0`), repo, layer, pr); err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("unlock %s %s for #%d: %w", repo, layer, pr, err)
	}
	return l, nil
}

// TakeSlot claims the right to run a layer for runID: at most one run per
// layer executes at a time, across replicas. A slot whose run is no longer
// running (finished, or lost with its process) is taken over. It reports
// whether the slot is now runID's.
func (s *Store) TakeSlot(ctx context.Context, repo, layer string, runID int64) (bool, error) {
	res, err := s.exec(ctx, `INSERT INTO layer_slots (repo, layer, run_id, taken_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (repo, layer) DO NOTHING`, repo, layer, runID, now())
	if err != nil {
		return false, fmt.Errorf("take slot of %s %s: %w", repo, layer, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	var holder int64
	var status sql.NullString
	err = s.queryRow(ctx, `SELECT l.run_id, r.status FROM layer_slots l LEFT JOIN runs r ON r.id = l.run_id
		WHERE l.repo = ? AND l.layer = ?`, repo, layer).Scan(&holder, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return s.TakeSlot(ctx, repo, layer, runID)
	}
	if err != nil {
		return false, err
	}
	if holder == runID {
		return true, nil
	}
	if status.Valid && status.String == RunRunning {
		return false, nil
	}
	// Compare and swap: of several waiters, one takes the abandoned slot.
	res, err = s.exec(ctx, `UPDATE layer_slots SET run_id = ?, taken_at = ? WHERE repo = ? AND layer = ? AND run_id = ?`,
		runID, now(), repo, layer, holder)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ReleaseSlot frees a layer's slot held by runID.
func (s *Store) ReleaseSlot(ctx context.Context, repo, layer string, runID int64) error {
	_, err := s.exec(ctx, `DELETE FROM layer_slots WHERE repo = ? AND layer = ? AND run_id = ?`, repo, layer, runID)
	return err
}

// SetPRHead records the newest head of a PR; it returns the previous one
// ("" when none was known).
func (s *Store) SetPRHead(ctx context.Context, repo string, pr int, headSHA string) (string, error) {
	prev, err := s.PRHead(ctx, repo, pr)
	if err != nil {
		return "", err
	}
	_, err = s.exec(ctx, `INSERT INTO pr_heads (repo, pr, head_sha, updated_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (repo, pr) DO UPDATE SET head_sha = excluded.head_sha, updated_at = excluded.updated_at`,
		repo, pr, headSHA, now())
	return prev, err
}

// PRHead is the newest known head of a PR, "" when unknown.
func (s *Store) PRHead(ctx context.Context, repo string, pr int) (string, error) {
	var sha string
	err := s.queryRow(ctx, `SELECT head_sha FROM pr_heads WHERE repo = ? AND pr = ?`, repo, pr).Scan(&sha)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return sha, err
}

// ForgetPR drops what is kept about a closed PR's head.
func (s *Store) ForgetPR(ctx context.Context, repo string, pr int) error {
	_, err := s.exec(ctx, `DELETE FROM pr_heads WHERE repo = ? AND pr = ?`, repo, pr)
	return err
}
