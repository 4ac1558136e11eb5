package queue

import (
	"context"
	"fmt"

	"strata.dev/strata/store"
)

// Pending counts the jobs that are still to run or running: available,
// running, retryable or pending. Jobs scheduled for later (a takeover's
// expiry) are not counted, nor a job whose process died: River's own row
// stays "running" until its rescuer comes (hours later), but Strata's
// reaper already declared its run lost and took care of what follows (see
// recovery.go). Zero is the queue at rest: every webhook taken so far has
// had all its effects, which is the barrier tests wait on to prove that
// nothing else happens.
func Pending(ctx context.Context, st *store.Store) (int, error) {
	var n int
	err := st.DB().QueryRowContext(ctx, st.Rebind(`SELECT count(*) FROM river_job j
		WHERE j.state IN ('available', 'running', 'retryable', 'pending')
		AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id AND r.status IN (?, ?))`),
		store.RunLost, store.RunInterrupted).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count pending jobs: %w", err)
	}
	return n, nil
}
