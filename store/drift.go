package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Drift states: what the last drift run of a layer found.
const (
	DriftUnknown = ""        // not run yet
	DriftClean   = "clean"   // the plan of the default branch is empty
	DriftDrifted = "drifted" // the plan has changes
	DriftFailed  = "failed"  // Terraform or its set-up failed
)

// DriftLayer is a layer that asks for drift detection on its repository's
// default branch, with when it is due and what its last run found.
type DriftLayer struct {
	Repo           string
	Layer          string
	InstallationID int64
	Schedule       string
	NextDue        time.Time
	State          string
	LastRunAt      time.Time
	LastSHA        string
	// Issue is the open issue reporting the layer's drift, 0 for none.
	Issue int
}

const driftColumns = `repo, layer, installation_id, schedule, next_due, state, last_run_at, last_sha, issue_number`

func scanDrift(row interface{ Scan(...any) error }) (*DriftLayer, error) {
	var l DriftLayer
	var due, ran int64
	if err := row.Scan(&l.Repo, &l.Layer, &l.InstallationID, &l.Schedule, &due, &l.State, &ran, &l.LastSHA, &l.Issue); err != nil {
		return nil, err
	}
	l.NextDue, l.LastRunAt = fromMillis(due), fromMillis(ran)
	return &l, nil
}

// DriftWanted is a layer asking for drift detection, as the default
// branch's config says.
type DriftWanted struct {
	Layer    string
	Schedule string
}

// SetDriftLayers makes repo's drift layers those of want: a new layer, or
// one whose schedule changed, is due at firstDue; the others keep their
// due time and last result; layers no longer asking are forgotten.
func (s *Store) SetDriftLayers(ctx context.Context, repo string, installationID int64, want []DriftWanted, firstDue time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	keep := make([]string, 0, len(want))
	args := []any{repo}
	for _, w := range want {
		if _, err := tx.ExecContext(ctx, s.rebind(`INSERT INTO drift_layers (repo, layer, installation_id, schedule, next_due)
			VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (repo, layer) DO UPDATE SET installation_id = excluded.installation_id,
				next_due = CASE WHEN drift_layers.schedule = excluded.schedule THEN drift_layers.next_due ELSE excluded.next_due END,
				schedule = excluded.schedule`),
			repo, w.Layer, installationID, w.Schedule, firstDue.UnixMilli()); err != nil {
			return fmt.Errorf("drift schedule of %s %s: %w", repo, w.Layer, err)
		}
		keep = append(keep, "?")
		args = append(args, w.Layer)
	}
	q := `DELETE FROM drift_layers WHERE repo = ?`
	if len(keep) > 0 {
		q += ` AND layer NOT IN (` + strings.Join(keep, ", ") + `)`
	}
	if _, err := tx.ExecContext(ctx, s.rebind(q), args...); err != nil {
		return fmt.Errorf("forget drift layers of %s: %w", repo, err)
	}
	return tx.Commit()
}

// DueDriftLayers lists the drift layers due at or before now, the longest
// overdue first.
func (s *Store) DueDriftLayers(ctx context.Context, now time.Time) ([]*DriftLayer, error) {
	return s.driftLayers(ctx, `SELECT `+driftColumns+` FROM drift_layers WHERE next_due <= ? ORDER BY next_due, repo, layer`, now.UnixMilli())
}

// DriftLayersOf lists a repository's drift layers, by name.
func (s *Store) DriftLayersOf(ctx context.Context, repo string) ([]*DriftLayer, error) {
	return s.driftLayers(ctx, `SELECT `+driftColumns+` FROM drift_layers WHERE repo = ? ORDER BY layer`, repo)
}

func (s *Store) driftLayers(ctx context.Context, q string, args ...any) ([]*DriftLayer, error) {
	return queryAll(ctx, s, scanDrift, q, args...)
}

// DriftRepos lists the repositories with drift layers.
func (s *Store) DriftRepos(ctx context.Context) ([]string, error) {
	return queryAll(ctx, s, scanString, `SELECT DISTINCT repo FROM drift_layers ORDER BY repo`)
}

// DriftLayer returns one drift layer, or ErrNotFound.
func (s *Store) DriftLayer(ctx context.Context, repo, layer string) (*DriftLayer, error) {
	l, err := scanDrift(s.queryRow(ctx, `SELECT `+driftColumns+` FROM drift_layers WHERE repo = ? AND layer = ?`, repo, layer))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return l, err
}

// SetDriftDue moves a layer's next run, without a result: its run was
// enqueued (due at the schedule's next time) or skipped (due again soon).
func (s *Store) SetDriftDue(ctx context.Context, repo, layer string, due time.Time) error {
	_, err := s.exec(ctx, `UPDATE drift_layers SET next_due = ? WHERE repo = ? AND layer = ?`, due.UnixMilli(), repo, layer)
	return err
}

// RecordDrift stores what a run found at sha and the issue that reports
// it now (0 for none). When the layer is due next was set when the run was
// enqueued.
func (s *Store) RecordDrift(ctx context.Context, repo, layer, state, sha string, issue int, ranAt time.Time) error {
	_, err := s.exec(ctx, `UPDATE drift_layers SET state = ?, last_sha = ?, issue_number = ?, last_run_at = ?
		WHERE repo = ? AND layer = ?`, state, sha, issue, ranAt.UnixMilli(), repo, layer)
	return err
}

// SetDriftIssue remembers the issue just opened for a layer's drift.
func (s *Store) SetDriftIssue(ctx context.Context, repo, layer string, issue int) error {
	_, err := s.exec(ctx, `UPDATE drift_layers SET issue_number = ? WHERE repo = ? AND layer = ?`, issue, repo, layer)
	return err
}

// ForgetDriftLayer drops a layer that no longer asks for drift detection.
func (s *Store) ForgetDriftLayer(ctx context.Context, repo, layer string) error {
	_, err := s.exec(ctx, `DELETE FROM drift_layers WHERE repo = ? AND layer = ?`, repo, layer)
	return err
}

// DriftCounts counts the drift layers by the state of their last run.
func (s *Store) DriftCounts(ctx context.Context) (map[string]int, error) {
	rows, err := s.query(ctx, `SELECT state, count(*) FROM drift_layers GROUP BY state`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			return nil, err
		}
		out[state] = n
	}
	return out, rows.Err()
}
