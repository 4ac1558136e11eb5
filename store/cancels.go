package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
)

// PlanInFlight is a plan of a PR that is queued or running: its batch
// created its check and its job has no outcome yet (SettlePlan).
type PlanInFlight struct {
	Batch      string
	Layer      string
	CheckRunID int64
}

// CancelPlans records that user cancelled the PR's queued and running plans
// and returns those it cancelled, oldest batch first. A plan cancelled
// before is not returned again. The plan jobs read it (PlanCancelledBy):
// nothing here stops a process.
func (s *Store) CancelPlans(ctx context.Context, repo string, pr int, user string) ([]PlanInFlight, error) {
	rows, err := s.query(ctx, `SELECT l.batch_id, l.layer, l.check_run_id FROM plan_batch_layers l
		JOIN plan_batches b ON b.id = l.batch_id
		WHERE b.repo = ? AND b.pr = ? AND l.check_run_id <> 0 AND l.cancelled_by = '' AND l.settled = 0
		AND NOT EXISTS (SELECT 1 FROM plan_batch_items i WHERE i.batch_id = l.batch_id AND i.layer = l.layer)
		ORDER BY b.created_at, l.batch_id, l.layer`, repo, pr)
	if err != nil {
		return nil, fmt.Errorf("plans in flight of %s#%d: %w", repo, pr, err)
	}
	found, err := collect(rows, func(r rowScanner) (PlanInFlight, error) {
		var p PlanInFlight
		err := r.Scan(&p.Batch, &p.Layer, &p.CheckRunID)
		return p, err
	})
	if err != nil {
		return nil, err
	}
	var out []PlanInFlight
	for _, p := range found {
		res, err := s.exec(ctx, `UPDATE plan_batch_layers SET cancelled_by = ?, cancelled_at = ?
			WHERE batch_id = ? AND layer = ? AND cancelled_by = '' AND settled = 0`, user, now(), p.Batch, p.Layer)
		if err != nil {
			return out, fmt.Errorf("cancel the plan of %s in batch %s: %w", p.Layer, p.Batch, err)
		}
		if n, _ := res.RowsAffected(); n == 1 {
			out = append(out, p)
		}
	}
	return out, nil
}

// PlanCancelledBy returns who cancelled the batch's plan of layer, or "".
func (s *Store) PlanCancelledBy(ctx context.Context, batchID, layer string) (string, error) {
	var user string
	err := s.queryRow(ctx, `SELECT cancelled_by FROM plan_batch_layers WHERE batch_id = ? AND layer = ?`,
		batchID, layer).Scan(&user)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return user, err
}

// SettlePlan records that the batch's plan of layer has its outcome, so
// that a /cancel from now on leaves it alone; it returns who cancelled it
// first, if anyone did (then the plan is cancelled, whatever it gave).
func (s *Store) SettlePlan(ctx context.Context, batchID, layer string) (cancelledBy string, err error) {
	res, err := s.exec(ctx, `UPDATE plan_batch_layers SET settled = 1 WHERE batch_id = ? AND layer = ? AND cancelled_by = ''`,
		batchID, layer)
	if err != nil {
		return "", fmt.Errorf("settle the plan of %s in batch %s: %w", layer, batchID, err)
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return "", nil
	}
	return s.PlanCancelledBy(ctx, batchID, layer)
}

// RunningRuns returns the PR's runs of kind that are running, oldest first.
func (s *Store) RunningRuns(ctx context.Context, repo string, pr int, kind string) ([]*Run, error) {
	rows, err := s.query(ctx, `SELECT `+runColumns+` FROM runs WHERE repo = ? AND pr = ? AND kind = ? AND status = ?
		ORDER BY id`, repo, pr, kind, RunRunning)
	if err != nil {
		return nil, err
	}
	return collectRuns(rows)
}
