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
// mirrors it. When it ends, the row moves to takeover_endings until the
// default branch's head is hydrated back (see EndTakeover).
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
	// EndedAt and Why are set on an ending: a takeover that ended and whose
	// hand-back is not enqueued yet (see EndTakeover).
	EndedAt time.Time
	Why     string
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
	return collectTakeovers(rows)
}

// OverdueTakeovers lists takeovers that expired before `before`, in every
// repository: normally their expiry job ends them on time, so one still here
// had its job fail for good, or never got one.
func (s *Store) OverdueTakeovers(ctx context.Context, before time.Time) ([]*Takeover, error) {
	rows, err := s.query(ctx, `SELECT `+takeoverColumns+` FROM takeovers WHERE expires_at < ? ORDER BY repo, sync`, before.UnixMilli())
	if err != nil {
		return nil, err
	}
	return collectTakeovers(rows)
}

func collectTakeovers(rows *sql.Rows) ([]*Takeover, error) { return collect(rows, scanTakeover) }

// SetTakeoverCheck records the check that mirrors a takeover on headSHA, if
// the PR still holds it.
func (s *Store) SetTakeoverCheck(ctx context.Context, repo, sync string, pr int, headSHA string, checkRunID int64) error {
	_, err := s.exec(ctx, `UPDATE takeovers SET head_sha = ?, check_run_id = ? WHERE repo = ? AND sync = ? AND pr = ?`,
		headSHA, checkRunID, repo, sync, pr)
	return err
}

// Ending a takeover is two steps, so that its hand-back (the hydration of
// the default branch's head into the destination, which tells the PR) is
// never lost: EndTakeover or ExpireTakeover moves the row to
// takeover_endings in one transaction, and FinishTakeoverEnding deletes it
// once the hand-back job is enqueued. Whatever fails or crashes in between,
// a retry of the job that ended it, the next takeover job on the sync or PR,
// or the periodic sweep finds the ending in TakeoverEndings and finishes it.
//
// An ending is no longer a takeover: Takeover and TakeoversOfPR do not see
// it. So another PR may take the sync over at once (the old hand-back then
// finds it taken and only tells its PR), and pushes to the default branch
// hydrate the sync again at once. Pausing pushes until the hand-back is
// enqueued would lose a push landing after the hand-back read the default
// branch's head; not pausing them costs nothing, since a hydration refuses
// to replace a newer source commit, whichever of the two runs last.

// EndTakeover ends a PR's takeover of a sync, why saying how, and returns it
// as ending; nil when the PR did not hold it.
func (s *Store) EndTakeover(ctx context.Context, repo, sync string, pr int, why string) (*Takeover, error) {
	return s.endTakeover(ctx, func(*Takeover) string { return why }, `repo = ? AND sync = ? AND pr = ?`, repo, sync, pr)
}

// ExpireTakeover ends a PR's takeover of a sync if it has expired at now,
// and returns it as ending, why(t) saying how; nil when the PR does not hold
// it (it ended otherwise: see TakeoverEndings) or holds it longer (it was
// extended after the expiry was scheduled).
func (s *Store) ExpireTakeover(ctx context.Context, repo, sync string, pr int, at time.Time, why func(*Takeover) string) (*Takeover, error) {
	return s.endTakeover(ctx, why, `repo = ? AND sync = ? AND pr = ? AND expires_at <= ?`, repo, sync, pr, at.UnixMilli())
}

func (s *Store) endTakeover(ctx context.Context, why func(*Takeover) string, where string, args ...any) (*Takeover, error) {
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
	t.EndedAt, t.Why = fromMillis(now()), why(t)
	// The same PR may end a takeover of the sync again before an earlier
	// ending is finished (it took it back meanwhile): the newest one wins, a
	// single hand-back serves both.
	if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO takeover_endings (`+takeoverColumns+`, ended_at, reason)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (repo, sync, pr) DO UPDATE SET holder = excluded.holder, head_sha = excluded.head_sha,
			started_at = excluded.started_at, expires_at = excluded.expires_at, check_run_id = excluded.check_run_id,
			installation_id = excluded.installation_id, ended_at = excluded.ended_at, reason = excluded.reason`),
		t.Repo, t.Sync, t.PR, t.Holder, t.HeadSHA, t.StartedAt.UnixMilli(), t.ExpiresAt.UnixMilli(), t.CheckRunID, t.InstallationID,
		t.EndedAt.UnixMilli(), t.Why); err != nil {
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

// TakeoverEndings lists the takeovers that ended and whose hand-back is not
// enqueued yet, oldest first: of a repo ("" for every repo), of a PR (0 for
// every PR), ended before a time (zero for any time).
func (s *Store) TakeoverEndings(ctx context.Context, repo string, pr int, endedBefore time.Time) ([]*Takeover, error) {
	q, args := `SELECT `+takeoverColumns+`, ended_at, reason FROM takeover_endings WHERE 1 = 1`, []any{}
	if repo != "" {
		q, args = q+` AND repo = ?`, append(args, repo)
	}
	if pr != 0 {
		q, args = q+` AND pr = ?`, append(args, pr)
	}
	if !endedBefore.IsZero() {
		q, args = q+` AND ended_at < ?`, append(args, endedBefore.UnixMilli())
	}
	return queryAll(ctx, s, func(r rowScanner) (*Takeover, error) {
		var t Takeover
		var started, expires, ended int64
		if err := r.Scan(&t.Repo, &t.Sync, &t.PR, &t.Holder, &t.HeadSHA, &started, &expires, &t.CheckRunID, &t.InstallationID,
			&ended, &t.Why); err != nil {
			return nil, err
		}
		t.StartedAt, t.ExpiresAt, t.EndedAt = fromMillis(started), fromMillis(expires), fromMillis(ended)
		return &t, nil
	}, q+` ORDER BY ended_at, repo, sync, pr`, args...)
}

// FinishTakeoverEnding forgets an ending whose hand-back is enqueued. A newer
// ending of the same PR's takeover (t.EndedAt differs) is kept.
func (s *Store) FinishTakeoverEnding(ctx context.Context, t *Takeover) error {
	_, err := s.exec(ctx, `DELETE FROM takeover_endings WHERE repo = ? AND sync = ? AND pr = ? AND ended_at = ?`,
		t.Repo, t.Sync, t.PR, t.EndedAt.UnixMilli())
	return err
}
