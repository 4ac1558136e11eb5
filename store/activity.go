package store

import (
	"context"
	"strings"
	"time"
)

// Activity is what the web UI's repository list shows of one repository.
type Activity struct {
	Locks   int
	Running int
	// LastRun is when its latest run began; zero for none.
	LastRun time.Time
}

// ActivityOf sums up runs and locks per repository, by lower-case full
// name (GitHub's names are case-insensitive).
func (s *Store) ActivityOf(ctx context.Context) (map[string]Activity, error) {
	out := map[string]Activity{}
	rows, err := s.query(ctx, `SELECT repo, SUM(CASE WHEN status = ? THEN 1 ELSE 0 END), MAX(started_at)
		FROM runs GROUP BY repo`, RunRunning)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var repo string
		var running int
		var last int64
		if err := rows.Scan(&repo, &running, &last); err != nil {
			return nil, err
		}
		k := strings.ToLower(repo)
		a := out[k]
		a.Running += running
		if t := fromMillis(last); t.After(a.LastRun) {
			a.LastRun = t
		}
		out[k] = a
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	locks, err := s.AllLocks(ctx)
	if err != nil {
		return nil, err
	}
	for _, l := range locks {
		k := strings.ToLower(l.Repo)
		a := out[k]
		a.Locks++
		out[k] = a
	}
	return out, nil
}
