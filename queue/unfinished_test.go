package queue_test

import (
	"context"
	"testing"

	"strata.dev/strata/queue"
	"strata.dev/strata/store"
)

// Jobs of a kind and repository still to run are listed with the fields
// asked for, oldest first; another repository's, another kind's and a
// finished one are not; one waiting for a later time is.
func TestUnfinishedListsTheJobsStillToRun(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		f := newFixture(t, d)
		ctx := context.Background()
		enqueue := func(args echoArgs) int64 {
			t.Helper()
			id, err := f.q.Enqueue(ctx, args, nil)
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		first := enqueue(echoArgs{Repo: "acme/infra", N: 1})
		enqueue(echoArgs{Repo: "acme/other", N: 2})
		done := enqueue(echoArgs{Repo: "acme/infra", N: 3})
		later := enqueue(echoArgs{Repo: "acme/infra", N: 4})
		if _, err := f.q.Enqueue(ctx, sideArgs{Repo: "acme/infra"}, nil); err != nil {
			t.Fatal(err)
		}
		for q, id := range map[string]int64{
			`UPDATE river_job SET state = 'completed', finalized_at = created_at WHERE id = ?`: done,
			`UPDATE river_job SET state = 'scheduled' WHERE id = ?`:                            later,
		} {
			if _, err := f.st.DB().ExecContext(ctx, f.st.Rebind(q), id); err != nil {
				t.Fatal(err)
			}
		}
		got, err := queue.Unfinished(ctx, f.st, "echo", "Acme/Infra", "n", "missing")
		if err != nil || len(got) != 2 || got[0].ID != first || got[1].ID != later ||
			got[0].Args["n"] != "1" || got[1].Args["n"] != "4" || got[0].Args["missing"] != "" {
			t.Fatalf("unfinished = %+v, %v", got, err)
		}
	})
}
