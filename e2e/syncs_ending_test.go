package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/hydrate/hydratetest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// takenOver opens a PR that sets dev's replicas to 8, takes dev over with
// it and waits until its head is hydrated and the takeover check says so.
func (e *syncsEnv) takenOver(arg string) (pr int, head string) {
	e.t.Helper()
	e.Repo.SetPermission("alice", "write")
	e.completed(e.push(map[string]string{"docs/README.md": "x\n"}, "First"), devHydrate)
	e.Repo.Commit("try", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(8)}, "Try eight")
	p := e.Repo.OpenPR("try", "main", "alice")
	e.comment(p.Number, "alice", "/takeover dev"+arg)
	e.commentWith(p.Number, "took over `dev`")
	head = p.HeadSHA()
	e.GitHub.WaitFor(e.t, syncsWait, func() bool {
		tk, ok := e.Repo.CheckRun(head, devTakeover)
		return ok && strings.Contains(tk.Summary, "Hydrated `dev`") &&
			strings.Contains(e.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 8")
	})
	return p.Number, head
}

// givenBack checks that dev holds main's head again and that the PR was told.
func (e *syncsEnv) givenBack(pr int, head, why string) {
	e.t.Helper()
	c := e.commentWith(pr, "Strata rehydrated it from the default branch")
	if !strings.Contains(c.Body, why) {
		e.t.Errorf("hand-back comment = %q", c.Body)
	}
	if got := e.hydrated("dev")["deployment_dev_api.yaml"]; !strings.Contains(got, "replicas: 3") {
		e.t.Errorf("dev after the takeover ended:\n%s", got)
	}
	state, err := hydrate.ParseSyncState([]byte(e.hydrated("dev")[hydrate.SyncStateFile]))
	if err != nil || state.Takeover != nil || state.SourceCommit != e.Repo.Branch("main") {
		e.t.Errorf("sync state after the takeover ended = %+v %v", state, err)
	}
	if cr := e.completed(head, devTakeover); cr.Title != "Released" {
		e.t.Errorf("takeover check = %+v", cr)
	}
	for _, c := range e.Repo.Comments(pr) {
		if strings.Contains(c.Body, "holds no takeover") {
			e.t.Errorf("the retry lost the takeover: %q", c.Body)
		}
	}
}

// clientTries is how often Strata's GitHub client sends an idempotent
// request that keeps failing with 5xx: once and three retries (ghretry).
const clientTries = 4

// failHard fails a request so that the client's own retries give up too,
// and the job's retry is what has to recover.
func failHard(gh *githubtest.Server, method, path string, status int) {
	for range clientTries {
		gh.FailNext(method, path, status)
	}
}

// The Release button ends the takeover, and GitHub fails the first request
// of the hand-back (completing the takeover check): the command's retry
// still hydrates main's head into dev and tells the PR, and the sync can be
// taken over again.
func TestSyncsTakeoverReleaseSurvivesAFailure(t *testing.T) {
	e := startSyncs(t, apptest.Options{}, nil)
	pr, head := e.takenOver("")
	tk, _ := e.Repo.CheckRun(head, devTakeover)

	failHard(e.GitHub, http.MethodPatch, fmt.Sprintf("/repos/acme/infra/check-runs/%d", tk.ID), http.StatusBadGateway)
	e.Deliver(e.Repo.CheckRunEvent("requested_action", tk.ID, "release", "alice"))
	e.givenBack(pr, head, "@alice released it")
	if f := e.GitHub.Failed(); len(f) != clientTries {
		t.Fatalf("failed requests = %+v", f)
	}

	e.comment(pr, "alice", "/takeover dev 1h")
	e.commentWith(pr, "@alice took over `dev` until")
	noViolations(t, e.GitHub)
}

// The takeover expires, and GitHub fails reading the default branch's head
// for the hand-back: the expiry job's retry hydrates it and tells the PR.
func TestSyncsTakeoverExpirySurvivesAFailure(t *testing.T) {
	clock := &testClock{}
	e := startSyncs(t, apptest.Options{Clock: clock.Now}, nil)
	// Only the hand-back reads main's ref (hydrations read dev's), so the
	// fault can wait from the start.
	failHard(e.GitHub, http.MethodGet, "/repos/acme/infra/git/ref/heads/main", http.StatusInternalServerError)
	pr, head := e.takenOver(" 2h")
	clock.elapse(t, e.Server.Store(), 2*time.Hour+time.Second)
	e.givenBack(pr, head, "it expired at")
	if f := e.GitHub.Failed(); len(f) != clientTries {
		t.Fatalf("failed requests = %+v", f)
	}
	noViolations(t, e.GitHub)
}

// A takeover whose expiry job is gone (it failed for good, or /takeover
// failed after claiming the sync) does not hold the sync forever: the
// periodic sweep ends it once it is overdue and hands the sync back.
func TestSyncsOverdueTakeoverIsSweptUp(t *testing.T) {
	db := storetest.URL(t, store.SQLite)
	data := t.TempDir()
	e := startSyncs(t, apptest.Options{DatabaseURL: db, DataDir: data}, nil)
	pr, head := e.takenOver(" 2h")
	e.Stop()

	// While no server runs: the expiry job disappears and the takeover is
	// overdue by more than an expiry job's timeout.
	st, err := store.Open(context.Background(), db, data)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if res, err := st.DB().ExecContext(ctx, `DELETE FROM river_job WHERE kind = 'sync_takeover_expiry'`); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("deleted %d expiry jobs, want the one scheduled", n)
	}
	if _, err := st.DB().ExecContext(ctx, st.Rebind(`UPDATE takeovers SET expires_at = ?`),
		time.Now().Add(-time.Hour).UnixMilli()); err != nil {
		t.Fatal(err)
	}
	st.Close()

	again := &syncsEnv{scenario{Env: apptest.Start(t, apptest.Options{DatabaseURL: db, DataDir: data, GitHub: e.GitHub,
		Configure: func(c *config.Server) { c.RepinInterval = 500 * time.Millisecond }}), t: t, wait: syncsWait}}
	again.givenBack(pr, head, "it expired at")
	noViolations(t, e.GitHub)
}
