package e2e

import (
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/hydrate/hydratetest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

const devTakeover = "strata/takeover: dev"

// /takeover by a writer hydrates the PR head into dev and pauses pushes;
// another PR is refused naming the holder; a push to the PR rehydrates; the
// Release button gives dev back, hydrated from main's head, and says so.
func TestSyncsTakeoverLifecycle(t *testing.T) {
	e := startSyncs(t, apptest.Options{}, nil)
	e.Repo.SetPermission("alice", "write")
	e.Repo.SetPermission("bob", "write")
	e.Repo.SetPermission("reader", "read")
	first := e.push(map[string]string{"docs/README.md": "x\n"}, "First")
	e.completed(first, devHydrate)

	e.Repo.Commit("try", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(8)}, "Try eight")
	pr := e.Repo.OpenPR("try", "main", "alice")

	e.comment(pr.Number, "reader", "/takeover dev")
	e.commentWith(pr.Number, "a takeover needs write")

	e.comment(pr.Number, "alice", "/takeover dev 30h")
	reply := e.commentWith(pr.Number, "took over `dev`")
	if !strings.Contains(reply.Body, "capped at the sync's maximum, 12h)") {
		t.Errorf("reply = %q", reply.Body)
	}
	head := pr.HeadSHA()
	e.WaitFor(syncsWait, func() bool {
		return strings.Contains(e.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 8")
	})
	tk, ok := e.Repo.CheckRun(head, devTakeover)
	if !ok || tk.Status != "in_progress" || !strings.HasPrefix(tk.Title, "Taken over until ") || tk.ExternalID != "pr:1" ||
		!slices.Equal(actionIDs(tk), []string{"release"}) {
		t.Fatalf("takeover check = %+v", tk)
	}
	state, err := hydrate.ParseSyncState([]byte(e.hydrated("dev")[hydrate.SyncStateFile]))
	if err != nil || state.Takeover == nil || state.Takeover.PR != 1 || state.Takeover.Head != head || state.Takeover.By != "alice" {
		t.Fatalf("sync state = %+v %v", state, err)
	}

	// Pushes to main do not hydrate dev meanwhile.
	paused := e.push(map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(2)}, "Two")
	cr := e.completed(paused, devHydrate)
	if cr.Conclusion != "neutral" || !strings.HasPrefix(cr.Title, "Paused by #1 until ") {
		t.Fatalf("paused check = %s %q", cr.Conclusion, cr.Title)
	}
	if !strings.Contains(e.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 8") {
		t.Error("a push hydrated dev during the takeover")
	}

	// Another PR is refused, naming the holder.
	e.Repo.Commit("other", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(9)}, "Nine")
	other := e.Repo.OpenPR("other", "main", "bob")
	e.comment(other.Number, "bob", "/takeover")
	refusal := e.commentWith(other.Number, "refused")
	if !strings.Contains(refusal.Body, "taken over by #1 (@alice)") {
		t.Errorf("refusal = %q", refusal.Body)
	}
	if cr := e.completed(other.HeadSHA(), devTakeover); cr.Conclusion != "failure" || cr.Title != "Taken over by #1" {
		t.Errorf("refused takeover check = %+v", cr)
	}

	// A push to the PR rehydrates from the new head; the check moves.
	newHead := pr.Push(map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(6)}, "Six")
	e.Deliver(e.Repo.PullRequestEvent("synchronize", pr.Number))
	e.WaitFor(syncsWait, func() bool {
		return strings.Contains(e.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 6")
	})
	moved := e.completed(head, devTakeover)
	if !strings.HasPrefix(moved.Title, "Takeover moved to ") {
		t.Errorf("old takeover check = %q", moved.Title)
	}
	tk, _ = e.Repo.CheckRun(newHead, devTakeover)
	if tk.Status != "in_progress" {
		t.Fatalf("takeover check on the new head = %+v", tk)
	}

	// The Release button gives dev back, hydrated from main (replicas 2).
	e.Deliver(e.Repo.CheckRunEvent("requested_action", tk.ID, "release", "alice"))
	done := e.commentWith(pr.Number, "Strata rehydrated it from the default branch")
	if !strings.Contains(done.Body, "@alice released it") {
		t.Errorf("release comment = %q", done.Body)
	}
	if !strings.Contains(e.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 2") {
		t.Errorf("dev after release:\n%s", e.hydrated("dev")["deployment_dev_api.yaml"])
	}
	if cr := e.completed(newHead, devTakeover); cr.Title != "Released" {
		t.Errorf("takeover check after release = %+v", cr)
	}
	state, _ = hydrate.ParseSyncState([]byte(e.hydrated("dev")[hydrate.SyncStateFile]))
	if state.Takeover != nil || state.SourceCommit != e.Repo.Branch("main") {
		t.Errorf("sync state after release = %+v", state)
	}

	// Now bob can take it over.
	e.comment(other.Number, "bob", "/takeover dev 1h")
	e.commentWith(other.Number, "@bob took over `dev`")
	noViolations(t, e.GitHub)
}

// Merging (or closing) the holder PR ends the takeover; /release of a sync
// the PR does not hold says so; a fork cannot take over.
func TestSyncsTakeoverEndsOnMergeAndForksAreRefused(t *testing.T) {
	e := startSyncs(t, apptest.Options{}, nil)
	e.Repo.SetPermission("alice", "write")
	e.Repo.SetPermission("mallory", "write")
	e.completed(e.push(map[string]string{"docs/README.md": "x\n"}, "First"), devHydrate)

	fork := e.GitHub.AddFork(e.Repo, "mallory")
	fork.Commit("evil", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(9)}, "Evil")
	fpr := e.Repo.OpenPR("mallory:evil", "main", "mallory")
	e.comment(fpr.Number, "mallory", "/takeover dev")
	if c := e.commentWith(fpr.Number, "refused"); !strings.Contains(c.Body, "fork") {
		t.Errorf("fork refusal = %q", c.Body)
	}

	e.Repo.Commit("try", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(8)}, "Eight")
	pr := e.Repo.OpenPR("try", "main", "alice")
	e.comment(pr.Number, "alice", "/release")
	e.commentWith(pr.Number, "holds no takeover")
	e.comment(pr.Number, "alice", "/takeover")
	e.WaitFor(syncsWait, func() bool {
		return strings.Contains(e.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 8")
	})
	e.Repo.ClosePR(pr.Number, true)
	e.Deliver(e.Repo.PullRequestEvent("closed", pr.Number))
	c := e.commentWith(pr.Number, "the pull request was merged")
	if !strings.Contains(c.Body, "rehydrated it from the default branch") {
		t.Errorf("end comment = %q", c.Body)
	}
	noViolations(t, e.GitHub)
}

// A takeover expires through a durable scheduled job: the server stops while
// it is held, the next server (same database) ends it at expiry, hydrates
// main's head and tells the PR.
func TestSyncsTakeoverExpiresAcrossRestart(t *testing.T) {
	db := storetest.URL(t, store.SQLite)
	data := t.TempDir()
	clock := &testClock{}
	e := startSyncs(t, apptest.Options{DatabaseURL: db, DataDir: data, Clock: clock.Now}, nil)
	e.Repo.SetPermission("alice", "write")
	e.completed(e.push(map[string]string{"docs/README.md": "x\n"}, "First"), devHydrate)

	e.Repo.Commit("try", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(8)}, "Eight")
	pr := e.Repo.OpenPR("try", "main", "alice")
	e.comment(pr.Number, "alice", "/takeover dev 2h")
	e.WaitFor(syncsWait, func() bool {
		return strings.Contains(e.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 8")
	})
	e.Stop()
	// The takeover expires while no server runs.
	withStore(t, db, data, func(st *store.Store) { clock.elapse(t, st, 2*time.Hour+time.Second) })

	again := &syncsEnv{scenario{Env: apptest.Start(t, apptest.Options{DatabaseURL: db, DataDir: data, GitHub: e.GitHub, Clock: clock.Now}),
		t: t, wait: syncsWait}}
	c := again.commentWith(pr.Number, "it expired at")
	if !strings.Contains(c.Body, "rehydrated it from the default branch") {
		t.Errorf("expiry comment = %q", c.Body)
	}
	if !strings.Contains(again.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 3") {
		t.Errorf("dev after expiry:\n%s", again.hydrated("dev")["deployment_dev_api.yaml"])
	}
	if cr := again.completed(pr.HeadSHA(), devTakeover); cr.Title != "Released" {
		t.Errorf("takeover check = %+v", cr)
	}
	noViolations(t, e.GitHub)
}

// The same across a real process killed with SIGKILL while the takeover is
// held: the expiry job waits in the database and the next process runs it.
func TestSyncsTakeoverExpiresAfterAKill(t *testing.T) {
	gh := githubtest.NewServer(t)
	repo := gh.AddRepo("acme", "infra")
	files := kustomizeRepo()
	files[".strata.yaml"] = syncsConfig
	repo.Commit("main", files, "Add manifests")
	repo.SetPermission("alice", "write")
	dbURL, dataDir := storetest.URL(t, store.SQLite), t.TempDir()
	e := &syncsEnv{scenario{Env: &apptest.Env{GitHub: gh, Repo: repo}, t: t, wait: syncsWait}}

	first := startProcess(t, gh, gh.URL(), dbURL, dataDir, 2)
	before := repo.Branch("main")
	sha := repo.Commit("main", map[string]string{"docs/README.md": "x\n"}, "First")
	first.deliver(repo.PushEvent("main", before, sha))
	e.completed(sha, devHydrate)
	repo.Commit("try", map[string]string{"deploy/overlays/dev/replicas.yaml": hydratetest.Replicas(8)}, "Eight")
	pr := repo.OpenPR("try", "main", "alice")
	first.deliver(repo.IssueCommentEvent(pr.Number, "alice", "/takeover dev 2h"))
	gh.WaitFor(t, syncsWait, func() bool {
		return strings.Contains(e.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 8")
	})
	first.cmd.Process.Signal(syscall.SIGKILL)
	<-first.done
	// The takeover expires while no process runs: a process keeps real
	// time, so the takeover and its expiry job age instead.
	withStore(t, dbURL, dataDir, func(st *store.Store) {
		ageTakeovers(t, st, 2*time.Hour+time.Second)
		jobsDue(t, st, 2*time.Hour+time.Second)
	})

	startProcess(t, gh, gh.URL(), dbURL, dataDir, 2)
	c := e.commentWith(pr.Number, "it expired at")
	if !strings.Contains(c.Body, "rehydrated it from the default branch") {
		t.Errorf("expiry comment = %q", c.Body)
	}
	if !strings.Contains(e.hydrated("dev")["deployment_dev_api.yaml"], "replicas: 3") {
		t.Errorf("dev after expiry:\n%s", e.hydrated("dev")["deployment_dev_api.yaml"])
	}
	noViolations(t, gh)
}
