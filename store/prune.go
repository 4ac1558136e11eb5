package store

import (
	"context"
	"fmt"
	"time"
)

// prunableRun is a finished run started before the cutoff that holds no
// slot; its arguments are RunRunning and the cutoff.
const prunableRun = `status <> ? AND started_at < ?
	AND id NOT IN (SELECT run_id FROM layer_slots) AND id NOT IN (SELECT run_id FROM release_slots)`

// Pruned counts what Prune deleted.
type Pruned struct {
	Deliveries, Runs, Batches int64
}

// Prune deletes the records older than before that nothing needs any more,
// so that the database (and the run logs in it) does not grow forever:
//   - webhook deliveries: their ids only stop redeliveries, and GitHub
//     redelivers for three days at most;
//   - finished runs with their logs (the /runs links of old checks then
//     answer 404); a running run, or one that holds a layer's or a
//     release's slot, is kept whatever its age;
//   - plan batches with their stored reports.
//
// Locks, plans, takeovers and hydration records are state, never pruned.
func (s *Store) Prune(ctx context.Context, before time.Time) (Pruned, error) {
	cutoff := before.UnixMilli()
	var p Pruned
	steps := []struct {
		what  string
		count *int64
		query string
		args  []any
	}{
		{"deliveries", &p.Deliveries, `DELETE FROM deliveries WHERE received_at < ?`, []any{cutoff}},
		{"run logs", nil, `DELETE FROM run_log_chunks WHERE run_id IN (SELECT id FROM runs WHERE ` + prunableRun + `)`,
			[]any{RunRunning, cutoff}},
		{"runs", &p.Runs, `DELETE FROM runs WHERE ` + prunableRun, []any{RunRunning, cutoff}},
		{"plan batch items", nil, `DELETE FROM plan_batch_items WHERE batch_id IN (SELECT id FROM plan_batches WHERE created_at < ?)`, []any{cutoff}},
		{"plan batch layers", nil, `DELETE FROM plan_batch_layers WHERE batch_id IN (SELECT id FROM plan_batches WHERE created_at < ?)`, []any{cutoff}},
		{"plan batches", &p.Batches, `DELETE FROM plan_batches WHERE created_at < ?`, []any{cutoff}},
	}
	for _, st := range steps {
		res, err := s.exec(ctx, st.query, st.args...)
		if err != nil {
			return p, fmt.Errorf("prune %s: %w", st.what, err)
		}
		if st.count != nil {
			*st.count, _ = res.RowsAffected()
		}
	}
	return p, nil
}
