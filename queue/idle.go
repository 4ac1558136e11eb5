package queue

import (
	"context"
	"fmt"
	"time"

	"strata.dev/strata/store"
)

// Pending counts the jobs that are still to run or running: available,
// retryable, pending or running. Jobs scheduled for later (a takeover's
// expiry) are not counted, nor a running job whose process died: River's
// own row stays "running" (until River's rescuer comes, hours later), but
// Strata's reaper already declared its run lost and took care of what
// follows (see recovery.go), or the run had ended and its process died
// before River recorded the job finished — which River does within
// milliseconds, so a row still "running" a few seconds after its run ended
// is one River will not finish. A run still "running" whose job River has
// let go (cancelled when it lost its lease) counts until a reaper claims
// and recovers it. Zero is the queue at rest: every webhook taken so far
// has had all its effects, which is the barrier tests wait on to prove
// that nothing else happens.
func Pending(ctx context.Context, st *store.Store) (int, error) {
	var n int
	err := st.DB().QueryRowContext(ctx, st.Rebind(`SELECT
		(SELECT count(*) FROM river_job j WHERE j.state IN `+activeStates+` AND `+liveJob(st)+`)
		+ (SELECT count(*) FROM runs r WHERE r.status = ?
			AND NOT EXISTS (SELECT 1 FROM river_job j WHERE j.id = r.job_id AND j.state IN `+activeStates+`))`),
		append(liveJobArgs(), store.RunRunning)...).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("count pending jobs: %w", err)
	}
	return n, nil
}

// liveJob is true of a River job j whose run no reaper declared lost or
// interrupted (what follows it was already taken care of) and that is not
// a "running" row whose process died (Pending says why); its arguments
// are liveJobArgs.
func liveJob(st *store.Store) string {
	return `NOT EXISTS (SELECT 1 FROM runs r WHERE r.job_id = j.id AND (r.status IN (?, ?)
		OR (j.state = 'running' AND r.attempt = ` + runAttempt(st) + ` AND r.status <> ? AND r.finished_at < ` + st.NowSQL() + ` - ?)))`
}

// runAttempt is the SQL of the attempt number the run of River job j's
// current working has: River's attempt plus the snoozes, as the tracker
// numbers it (recovery.go). Without the snoozes, a job working again
// after waiting out a rate limit would be taken for a dead row, its
// ended run having River's attempt.
func runAttempt(st *store.Store) string {
	snoozes := `CAST(COALESCE(json_extract(j.metadata, '$.snoozes'), 0) AS INTEGER)`
	if st.Dialect() == store.Postgres {
		snoozes = `COALESCE((j.metadata->>'snoozes')::int, 0)`
	}
	return `j.attempt + ` + snoozes
}

func liveJobArgs() []any {
	return []any{store.RunLost, store.RunInterrupted, store.RunRunning, deadRowAfter.Milliseconds()}
}

// deadRowAfter is how long after its run ended a job River still calls
// running is taken for one whose process died.
const deadRowAfter = 3 * time.Second

const activeStates = `('available', 'running', 'retryable', 'pending')`
