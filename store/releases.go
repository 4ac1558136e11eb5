package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// ReleaseKey names a Helm release by where it lives.
type ReleaseKey struct {
	Cluster, Namespace, ReleaseName string
}

func (k ReleaseKey) String() string { return k.Cluster + "/" + k.Namespace + "/" + k.ReleaseName }

// TakeReleaseSlot claims the right to run against a Helm release for runID:
// at most one run per release executes at a time, across replicas. A slot
// whose run is no longer running (finished, or lost with its process) is
// taken over. It reports whether the slot is now runID's.
func (s *Store) TakeReleaseSlot(ctx context.Context, k ReleaseKey, runID int64) (bool, error) {
	res, err := s.exec(ctx, `INSERT INTO release_slots (cluster, namespace, release_name, run_id, taken_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (cluster, namespace, release_name) DO NOTHING`, k.Cluster, k.Namespace, k.ReleaseName, runID, now())
	if err != nil {
		return false, fmt.Errorf("take slot of release %s: %w", k, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return true, nil
	}
	var holder int64
	var status sql.NullString
	err = s.queryRow(ctx, `SELECT l.run_id, r.status FROM release_slots l LEFT JOIN runs r ON r.id = l.run_id
		WHERE l.cluster = ? AND l.namespace = ? AND l.release_name = ?`, k.Cluster, k.Namespace, k.ReleaseName).Scan(&holder, &status)
	if errors.Is(err, sql.ErrNoRows) {
		return s.TakeReleaseSlot(ctx, k, runID)
	}
	if err != nil {
		return false, fmt.Errorf("slot of release %s: %w", k, err)
	}
	if holder == runID {
		return true, nil
	}
	if status.Valid && status.String == RunRunning {
		return false, nil
	}
	// Compare and swap: of several waiters, one takes the abandoned slot.
	res, err = s.exec(ctx, `UPDATE release_slots SET run_id = ?, taken_at = ?
		WHERE cluster = ? AND namespace = ? AND release_name = ? AND run_id = ?`,
		runID, now(), k.Cluster, k.Namespace, k.ReleaseName, holder)
	if err != nil {
		return false, fmt.Errorf("take over slot of release %s: %w", k, err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// ReleaseSlotHolder is the run holding a release's slot, 0 when free.
func (s *Store) ReleaseSlotHolder(ctx context.Context, k ReleaseKey) (int64, error) {
	var holder int64
	err := s.queryRow(ctx, `SELECT run_id FROM release_slots WHERE cluster = ? AND namespace = ? AND release_name = ?`,
		k.Cluster, k.Namespace, k.ReleaseName).Scan(&holder)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return holder, err
}

// FreeReleaseSlot frees a release's slot held by runID.
func (s *Store) FreeReleaseSlot(ctx context.Context, k ReleaseKey, runID int64) error {
	_, err := s.exec(ctx, `DELETE FROM release_slots WHERE cluster = ? AND namespace = ? AND release_name = ? AND run_id = ?`,
		k.Cluster, k.Namespace, k.ReleaseName, runID)
	return err
}
