package e2e

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
)

// scenario is what every feature's environment shares: the Strata server
// (only its fake GitHub and repository when the test runs real processes),
// the test, and how long to wait for Strata to answer.
type scenario struct {
	*apptest.Env
	t    *testing.T
	wait time.Duration
}

// comment posts a comment on the PR as user and delivers it.
func (e scenario) comment(pr int, user, body string) {
	e.t.Helper()
	e.Deliver(e.Repo.IssueCommentEvent(pr, user, body))
}

// completed waits for the check called name on sha to complete, and returns
// the latest such check.
func (e scenario) completed(sha, name string) githubtest.CheckRun {
	e.t.Helper()
	var cr githubtest.CheckRun
	e.GitHub.WaitFor(e.t, e.wait, func() bool {
		var ok bool
		cr, ok = e.Repo.CheckRun(sha, name)
		return ok && cr.Status == "completed"
	})
	return cr
}

// commentWith waits for a comment on the PR containing text.
func (e scenario) commentWith(pr int, text string) githubtest.Comment {
	e.t.Helper()
	var found githubtest.Comment
	e.GitHub.WaitFor(e.t, e.wait, func() bool {
		for _, c := range e.Repo.Comments(pr) {
			if strings.Contains(c.Body, text) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}

func noViolations(t *testing.T, gh *githubtest.Server) {
	t.Helper()
	for _, v := range gh.Violations() {
		t.Errorf("request GitHub would refuse: %s %s: %s", v.Method, v.Path, v.Err)
	}
}

// noFailedRuns fails when a job's attempt failed: a step that errors
// (a GitHub request Strata makes wrong, say) would otherwise be retried
// until a later attempt hides it.
func noFailedRuns(t *testing.T, st *store.Store) {
	t.Helper()
	rows, err := st.DB().Query(st.Rebind(`SELECT kind, summary FROM runs WHERE status = ?`), store.RunFailed)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind, summary string
		if err := rows.Scan(&kind, &summary); err != nil {
			t.Fatal(err)
		}
		t.Errorf("a %s run failed: %s", kind, summary)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
}

// runLogs reads the logs of the runs of kind, oldest first; of any
// repository when repo is "".
func runLogs(t *testing.T, st *store.Store, kind, repo string) []string {
	t.Helper()
	query, args := `SELECT id FROM runs WHERE kind = ?`, []any{kind}
	if repo != "" {
		query, args = query+` AND repo = ?`, append(args, repo)
	}
	return logsWhere(t, st, query+` ORDER BY id`, args...)
}

// logsWhere reads the logs of the runs whose ids query selects.
func logsWhere(t *testing.T, st *store.Store, query string, args ...any) []string {
	t.Helper()
	rows, err := st.DB().Query(st.Rebind(query), args...)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	logs := make([]string, len(ids))
	for i, id := range ids {
		if logs[i], err = st.Log(t.Context(), id); err != nil {
			t.Fatal(err)
		}
	}
	return logs
}

// slotSpans says when each run of the servers held a slot of what
// ("layer" or "release"): [taken, released] in Unix milliseconds, ordered
// by when they took it. The servers log it (worker.HoldSlot); the runs' own
// logs say nothing of slots.
func slotSpans(what string, servers ...*apptest.Env) [][2]int64 {
	var spans [][2]int64
	for _, s := range servers {
		spans = append(spans, s.SlotSpans(what)...)
	}
	slices.SortFunc(spans, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
	return spans
}
