package queue

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"strata.dev/strata/store"
)

// UnfinishedJob is a job still to run, retrying or running, with some of
// its arguments.
type UnfinishedJob struct {
	ID int64
	// Args are the named top-level fields of its arguments, as text ("" when
	// absent).
	Args map[string]string
}

// Unfinished lists the jobs of a kind and repository (full name, any case)
// that are still to run, scheduled, retrying or running, and not declared
// lost (as Pending counts them), oldest first, with the named fields of
// their arguments. A job that will still do something is in the list;
// one that ended, or whose lost run was taken over by a new job, is not.
func Unfinished(ctx context.Context, st *store.Store, kind, repo string, fields ...string) ([]UnfinishedJob, error) {
	cols := []string{"j.id"}
	for _, f := range fields {
		cols = append(cols, "coalesce(j.args ->> '"+strings.ReplaceAll(f, "'", "")+"', '')")
	}
	args := append([]any{kind, strings.ToLower(repo)}, liveJobArgs()...)
	rows, err := st.DB().QueryContext(ctx, st.Rebind(`SELECT `+strings.Join(cols, ", ")+` FROM river_job j
		WHERE j.kind = ? AND lower(j.args ->> 'repo') = ? AND j.state IN `+unfinishedStates+` AND `+liveJob(st)+` ORDER BY j.id`), args...)
	if err != nil {
		return nil, fmt.Errorf("list unfinished %s jobs of %s: %w", kind, repo, err)
	}
	defer rows.Close()
	var out []UnfinishedJob
	for rows.Next() {
		j := UnfinishedJob{Args: map[string]string{}}
		vals := make([]sql.NullString, len(fields))
		dest := []any{&j.ID}
		for i := range vals {
			dest = append(dest, &vals[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		for i, f := range fields {
			j.Args[f] = vals[i].String
		}
		out = append(out, j)
	}
	return out, rows.Err()
}

// unfinishedStates are activeStates and the scheduled ones: a job waiting
// for its time will still run.
const unfinishedStates = `('available', 'running', 'retryable', 'pending', 'scheduled')`
