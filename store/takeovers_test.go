package store_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

func expired(t *store.Takeover) string {
	return "it expired at " + t.ExpiresAt.UTC().Format(time.RFC3339)
}

// Ending a takeover keeps it as an ending until its hand-back is enqueued: a
// retry finds it, a new takeover and pushes are not held up by it, and
// finishing it forgets only that ending.
func TestTakeoverEndings(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			until := time.Now().Add(time.Hour).Truncate(time.Millisecond)
			tk := store.Takeover{Repo: "acme/infra", Sync: "dev", PR: 1, Holder: "alice", HeadSHA: "a1", ExpiresAt: until, InstallationID: 7}
			if _, ok, err := st.TryTakeover(ctx, tk); err != nil || !ok {
				t.Fatalf("takeover: %v %v", ok, err)
			}
			if err := st.SetTakeoverCheck(ctx, "acme/infra", "dev", 1, "a2", 99); err != nil {
				t.Fatal(err)
			}
			if e, err := st.TakeoverEndings(ctx, "", 0, time.Time{}); err != nil || len(e) != 0 {
				t.Fatalf("endings of a held takeover: %+v %v", e, err)
			}

			// Released: the row becomes an ending with its reason and check.
			gone, err := st.EndTakeover(ctx, "acme/infra", "dev", 1, "@alice released it")
			if err != nil || gone == nil || gone.Why != "@alice released it" || gone.EndedAt.IsZero() || gone.CheckRunID != 99 {
				t.Fatalf("end: %+v %v", gone, err)
			}
			// It is no takeover any more: pushes are not paused, #1 holds nothing.
			if _, err := st.Takeover(ctx, "acme/infra", "dev"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("takeover while ending: %v", err)
			}
			if held, _ := st.TakeoversOfPR(ctx, "acme/infra", 1); len(held) != 0 {
				t.Fatalf("#1 still holds %+v", held)
			}
			// A retry ends nothing more, and finds the ending.
			if again, err := st.EndTakeover(ctx, "acme/infra", "dev", 1, "retried"); err != nil || again != nil {
				t.Fatalf("ended twice: %+v %v", again, err)
			}
			for _, q := range []struct {
				repo string
				pr   int
			}{{"acme/infra", 1}, {"acme/infra", 0}, {"", 0}} {
				e, err := st.TakeoverEndings(ctx, q.repo, q.pr, time.Time{})
				if err != nil || len(e) != 1 || e[0].Sync != "dev" || e[0].PR != 1 || e[0].Holder != "alice" || e[0].HeadSHA != "a2" ||
					e[0].CheckRunID != 99 || e[0].InstallationID != 7 || !e[0].ExpiresAt.Equal(until) || e[0].Why != "@alice released it" ||
					!e[0].EndedAt.Equal(gone.EndedAt) {
					t.Fatalf("endings %+v: %+v %v", q, e, err)
				}
			}
			if e, _ := st.TakeoverEndings(ctx, "acme/other", 0, time.Time{}); len(e) != 0 {
				t.Fatalf("endings of another repo: %+v", e)
			}
			if e, _ := st.TakeoverEndings(ctx, "acme/infra", 2, time.Time{}); len(e) != 0 {
				t.Fatalf("endings of #2: %+v", e)
			}
			if e, _ := st.TakeoverEndings(ctx, "", 0, gone.EndedAt); len(e) != 0 {
				t.Fatalf("endings before it ended: %+v", e)
			}
			if e, _ := st.TakeoverEndings(ctx, "", 0, gone.EndedAt.Add(time.Millisecond)); len(e) != 1 {
				t.Fatalf("endings after it ended: %+v", e)
			}

			// #2 takes the sync over at once; #1's ending stays to be finished.
			if held, ok, err := st.TryTakeover(ctx, store.Takeover{Repo: "acme/infra", Sync: "dev", PR: 2, Holder: "bob", HeadSHA: "b1",
				ExpiresAt: until}); err != nil || !ok || held.PR != 2 {
				t.Fatalf("#2 while #1 ends: %+v %v %v", held, ok, err)
			}
			// #2's expiry: only once its time is up, with the reason given.
			if e, err := st.ExpireTakeover(ctx, "acme/infra", "dev", 2, until.Add(-time.Second), expired); err != nil || e != nil {
				t.Fatalf("expired early: %+v %v", e, err)
			}
			e2, err := st.ExpireTakeover(ctx, "acme/infra", "dev", 2, until, expired)
			if err != nil || e2 == nil || e2.Why != expired(e2) {
				t.Fatalf("expiry: %+v %v", e2, err)
			}
			if e, _ := st.TakeoverEndings(ctx, "acme/infra", 0, time.Time{}); len(e) != 2 {
				t.Fatalf("two endings: %+v", e)
			}

			// Finishing one forgets it alone, and twice is harmless.
			for range 2 {
				if err := st.FinishTakeoverEnding(ctx, gone); err != nil {
					t.Fatal(err)
				}
			}
			if e, _ := st.TakeoverEndings(ctx, "acme/infra", 0, time.Time{}); len(e) != 1 || e[0].PR != 2 {
				t.Fatalf("after finishing #1: %+v", e)
			}

			// #2 takes it back and ends again before the first ending is
			// finished: one ending, the newest; finishing the stale one keeps it.
			if _, ok, _ := st.TryTakeover(ctx, store.Takeover{Repo: "acme/infra", Sync: "dev", PR: 2, Holder: "bob", HeadSHA: "b2",
				ExpiresAt: until}); !ok {
				t.Fatal("#2 could not take it back")
			}
			// The first ending is a minute old: its time is set in its row,
			// not waited for, so the two endings never share a millisecond.
			e2.EndedAt = e2.EndedAt.Add(-time.Minute)
			if _, err := st.DB().ExecContext(ctx, st.Rebind(`UPDATE takeover_endings SET ended_at = ? WHERE repo = ? AND sync = ? AND pr = ?`),
				e2.EndedAt.UnixMilli(), "acme/infra", "dev", 2); err != nil {
				t.Fatal(err)
			}
			newer, err := st.EndTakeover(ctx, "acme/infra", "dev", 2, "the pull request was closed")
			if err != nil || newer == nil || !newer.EndedAt.After(e2.EndedAt) {
				t.Fatalf("second ending: %+v %v", newer, err)
			}
			if err := st.FinishTakeoverEnding(ctx, e2); err != nil {
				t.Fatal(err)
			}
			e, _ := st.TakeoverEndings(ctx, "acme/infra", 2, time.Time{})
			if len(e) != 1 || e[0].HeadSHA != "b2" || e[0].Why != "the pull request was closed" {
				t.Fatalf("after a second ending: %+v", e)
			}
			if err := st.FinishTakeoverEnding(ctx, e[0]); err != nil {
				t.Fatal(err)
			}
			if e, _ := st.TakeoverEndings(ctx, "", 0, time.Time{}); len(e) != 0 {
				t.Fatalf("left: %+v", e)
			}
		})
	}
}

// Overdue takeovers are those past their expiry by the given time, in every
// repository; a takeover still running is not one.
func TestOverdueTakeovers(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			ctx := context.Background()
			st := storetest.Open(t, d)
			now := time.Now()
			for _, tk := range []store.Takeover{
				{Repo: "acme/infra", Sync: "dev", PR: 1, Holder: "alice", HeadSHA: "a1", ExpiresAt: now.Add(-time.Hour), InstallationID: 7},
				{Repo: "acme/web", Sync: "dev", PR: 2, Holder: "bob", HeadSHA: "b1", ExpiresAt: now.Add(-time.Minute), InstallationID: 7},
				{Repo: "acme/api", Sync: "dev", PR: 3, Holder: "carol", HeadSHA: "c1", ExpiresAt: now.Add(time.Hour), InstallationID: 7},
			} {
				if _, ok, err := st.TryTakeover(ctx, tk); err != nil || !ok {
					t.Fatalf("takeover %s: %v %v", tk.Repo, ok, err)
				}
			}
			got, err := st.OverdueTakeovers(ctx, now.Add(-5*time.Minute))
			if err != nil || len(got) != 1 || got[0].Repo != "acme/infra" || got[0].PR != 1 {
				t.Fatalf("overdue by 5 minutes = %+v, %v; want acme/infra #1 only", got, err)
			}
			if got, _ := st.OverdueTakeovers(ctx, now); len(got) != 2 {
				t.Fatalf("overdue now = %+v, want the two expired ones", got)
			}
		})
	}
}
