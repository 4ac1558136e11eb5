package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// .strata.yaml files, on the default branch: it holds the policy.
const (
	requirementsYAML = `version: 1
layers:
  - name: network
    dir: infra/network
    apply_requirements: [approved, mergeable, undiverged]
`
	dependsOnYAML = `version: 1
layers:
  - name: base
    dir: infra/base
  - name: app
    dir: infra/app
    depends_on: [base]
`
)

// ghREST calls the fake GitHub as another integration would (CI posting a
// status, someone editing a check).
func (e *layersEnv) ghREST(method, path string, body any) {
	e.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, e.GitHub.APIURL()+path, bytes.NewReader(b))
	req.Header.Set("Authorization", "token "+e.GitHub.Token())
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/vnd.github+json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode >= 300 {
		out, _ := io.ReadAll(res.Body)
		e.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, out)
	}
}

// refusedFor waits for the n-th `/apply` refusal reply and the apply check
// on head refused with the same reason.
func (e *layersEnv) refusedFor(pr, n int, head, check, reason string) {
	e.t.Helper()
	e.WaitFor(layersWait, func() bool {
		k := 0
		for _, c := range e.Repo.Comments(pr) {
			if strings.Contains(c.Body, "`/apply` refused") {
				k++
				if k == n && !strings.Contains(c.Body, reason) {
					e.t.Fatalf("refusal %d = %q, want %q", n, c.Body, reason)
				}
			}
		}
		return k >= n
	})
	cr := e.completed(head, check)
	if cr.Conclusion != "failure" || cr.Title != "Apply refused" || !strings.Contains(cr.Summary, reason) {
		e.t.Fatalf("apply check after refusal %d = %s %q %q, want the reason %q", n, cr.Conclusion, cr.Title, cr.Summary, reason)
	}
}

func (e *layersEnv) planCount(pr int) int {
	n := 0
	for _, c := range e.Repo.Comments(pr) {
		if strings.Contains(c.Body, "Terraform plan:") {
			n++
		}
	}
	return n
}

// Layer `network` requires approved, mergeable and undiverged -> each
// missing requirement refuses /apply with the reason, in a reply and on the
// check; once all hold, the apply runs.
func TestLayersApplyRequirements(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, map[string]string{".strata.yaml": requirementsYAML})
	e.Repo.SetPermission("alice", "write")
	e.Repo.SetPermission("bob", "write")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	head := pr.HeadSHA()
	const check = "strata/apply: network"
	e.comment(pr.Number, "alice", "/plan network")
	if cr := e.completed(head, "strata/plan: network"); cr.Conclusion != "success" {
		t.Fatalf("plan = %+v", cr)
	}

	// approved: alice's own approval does not count, bob's does.
	e.Repo.AddReview(pr.Number, "alice", "APPROVED")
	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 1, head, check, "approving review by someone other than the author")
	e.Repo.AddReview(pr.Number, "bob", "APPROVED")

	// mergeable: conflicts, then a failing check of another tool.
	e.Repo.SetMergeable(pr.Number, false, "dirty")
	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 2, head, check, "merge without conflicts")
	e.Repo.SetMergeable(pr.Number, true, "clean")
	e.ghREST("POST", "repos/acme/infra/statuses/"+head, map[string]string{"state": "failure", "context": "ci/build"})
	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 3, head, check, "`ci/build` is failure")
	e.ghREST("POST", "repos/acme/infra/statuses/"+head, map[string]string{"state": "success", "context": "ci/build"})

	// undiverged: main moved on; the PR is rebased onto it and planned again.
	e.Repo.Commit("main", map[string]string{"README.md": "news\n"}, "News on main")
	e.comment(pr.Number, "alice", "/apply network")
	e.refusedFor(pr.Number, 4, head, check, "contain the tip of main")
	if applies := e.checksNamed(head, check); len(applies) != 4 {
		t.Fatalf("%d apply checks, want the 4 refusals", len(applies))
	}

	e.Repo.Commit("rebased", map[string]string{network + "/main.tf": e.layerFile(network, 2)}, "Rebased")
	e.Repo.SetBranch("grow", e.Repo.Branch("rebased"))
	head = pr.HeadSHA()
	e.Deliver(e.Repo.PullRequestEvent("synchronize", pr.Number))
	e.completed(head, "strata/plan: network")
	e.Repo.AddReview(pr.Number, "bob", "APPROVED")
	e.comment(pr.Number, "alice", "/apply network")
	if cr := e.completed(head, check); cr.Conclusion != "success" {
		t.Fatalf("apply once every requirement holds = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	noViolations(t, e.GitHub)
}

// `app` depends on `base`; both planned with changes -> /apply app is
// refused until base is applied, then proceeds.
func TestLayersDependsOn(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{"infra/base": 1, "infra/app": 1}, map[string]string{".strata.yaml": dependsOnYAML})
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("grow", "alice", map[string]string{
		"infra/base/main.tf": e.layerFile("infra/base", 2),
		"infra/app/main.tf":  e.layerFile("infra/app", 2),
	})
	head := pr.HeadSHA()
	e.comment(pr.Number, "alice", "/plan")
	e.completed(head, "strata/plan: base")
	e.completed(head, "strata/plan: app")

	e.comment(pr.Number, "alice", "/apply app")
	e.refusedFor(pr.Number, 1, head, "strata/apply: app", "`app` depends on `base`")
	if _, ok := e.Repo.CheckRun(head, "strata/apply: base"); ok {
		t.Fatal("base was applied by /apply app")
	}

	e.comment(pr.Number, "alice", "/apply base")
	if cr := e.completed(head, "strata/apply: base"); cr.Conclusion != "success" {
		t.Fatalf("apply base = %+v", cr)
	}
	e.comment(pr.Number, "alice", "/apply app")
	e.WaitFor(layersWait, func() bool {
		cr, _ := e.Repo.CheckRun(head, "strata/apply: app")
		return cr.Conclusion == "success"
	})
	e.WaitFor(layersWait, func() bool {
		a, _ := e.Repo.CheckRun(head, "strata/applied")
		return a.Conclusion == "success"
	})
	noViolations(t, e.GitHub)
}

// A push while a plan runs -> the old head's plan is cancelled and saves
// nothing; the new head is planned.
func TestLayersNewHeadCancelsRunningPlan(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 3000)})
	old := pr.HeadSHA()
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	e.WaitFor(layersWait, func() bool {
		cr, _ := e.Repo.CheckRun(old, networkPlan)
		return cr.Status == "in_progress"
	})

	head := pr.Push(map[string]string{network + "/main.tf": e.layerFile(network, 2)}, "Smaller")
	e.Deliver(e.Repo.PullRequestEvent("synchronize", pr.Number))
	cancelled := e.completed(old, networkPlan)
	if cancelled.Conclusion != "cancelled" || !strings.Contains(cancelled.Summary, "newer head") {
		t.Fatalf("plan of the old head = %s %q %q", cancelled.Conclusion, cancelled.Title, cancelled.Summary)
	}
	if cr := e.completed(head, networkPlan); cr.Conclusion != "success" || cr.Title != "2 to add, 0 to change, 0 to destroy" {
		t.Fatalf("plan of the new head = %s %q", cr.Conclusion, cr.Title)
	}
	if _, err := e.Server.Store().PlanAt(context.Background(), "acme/infra", pr.Number, network, old); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a plan of the old head was saved (err %v)", err)
	}
	if lock, _ := e.Repo.CheckRun(head, networkLock); lock.Title != "Locked by #1" || lock.Status != "in_progress" {
		t.Errorf("lock check on the new head = %+v", lock)
	}
	noViolations(t, e.GitHub)
}

// The lock check on the holder's head is completed behind Strata's back
// while it is down -> at start-up it is created again from the store.
func TestLayersLockCheckRepairedAtStartup(t *testing.T) {
	requireTerraform(t)
	db, data := storetest.URL(t, store.SQLite), t.TempDir()
	e := startLayers(t, apptest.Options{DatabaseURL: db, DataDir: data}, map[string]int{network: 1}, nil)
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	head := pr.HeadSHA()
	e.comment(pr.Number, "alice", "/plan")
	e.completed(head, networkPlan)
	lock, _ := e.Repo.CheckRun(head, networkLock)
	e.Stop()

	e.ghREST("PATCH", "repos/acme/infra/check-runs/"+itoa(lock.ID), map[string]any{"status": "completed", "conclusion": "neutral"})
	again := e.another(t, apptest.Options{DatabaseURL: db, DataDir: data, GitHub: e.GitHub})
	again.WaitFor(layersWait, func() bool {
		cr, _ := again.Repo.CheckRun(head, networkLock)
		return cr.ID != lock.ID && cr.Status == "in_progress" && cr.Title == "Locked by #1"
	})
	noViolations(t, e.GitHub)
}

// Re-plan, Unlock and re-run on the checks do what the comments do.
func TestLayersButtons(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("alice", "write")
	e.Repo.SetPermission("bob", "write")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	head := pr.HeadSHA()
	e.comment(pr.Number, "alice", "/plan")
	first := e.completed(head, networkPlan)

	// Re-plan: a new plan check, and a new comment.
	e.Deliver(e.Repo.CheckRunEvent("requested_action", first.ID, "plan", "bob"))
	e.WaitFor(layersWait, func() bool {
		cr, _ := e.Repo.CheckRun(head, networkPlan)
		return cr.ID != first.ID && cr.Conclusion == "success" && e.planCount(pr.Number) == 2
	})
	// Re-run (rerequested) of the plan check plans again.
	second, _ := e.Repo.CheckRun(head, networkPlan)
	e.Deliver(e.Repo.CheckRunEvent("rerequested", second.ID, "", "alice"))
	e.WaitFor(layersWait, func() bool {
		cr, _ := e.Repo.CheckRun(head, networkPlan)
		return cr.ID != second.ID && cr.Conclusion == "success" && e.planCount(pr.Number) == 3
	})

	// Unlock on the lock check: released, plans discarded, PR #2 can plan.
	lock, _ := e.Repo.CheckRun(head, networkLock)
	e.Deliver(e.Repo.CheckRunEvent("requested_action", lock.ID, "unlock", "alice"))
	if cr := e.completed(head, networkLock); cr.Title != "Lock released" || !strings.Contains(cr.Summary, "@alice unlocked it") {
		t.Fatalf("lock check after Unlock = %+v", cr)
	}
	e.commentWith(pr.Number, "released the lock on `infra/network`")
	if plans, _ := e.Server.Store().PlansOfPR(context.Background(), "acme/infra", pr.Number); len(plans) != 0 {
		t.Errorf("%d plans kept after Unlock", len(plans))
	}
	two := e.openPR("two", "bob", map[string]string{network + "/main.tf": e.layerFile(network, 3)})
	e.comment(two.Number, "bob", "/plan")
	if cr := e.completed(two.HeadSHA(), networkPlan); cr.Conclusion != "success" {
		t.Fatalf("PR #2 after the Unlock = %s %q", cr.Conclusion, cr.Title)
	}
	noViolations(t, e.GitHub)
}

// A closed PR reopened -> autoplanned again, taking the lock again.
func TestLayersReopenedAutoplans(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	head := pr.HeadSHA()
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	first := e.completed(head, networkPlan)

	e.Repo.ClosePR(pr.Number, false)
	e.Deliver(e.Repo.PullRequestEvent("closed", pr.Number))
	if cr := e.completed(head, networkLock); cr.Title != "Lock released" {
		t.Fatalf("lock check after close = %+v", cr)
	}
	e.Deliver(e.Repo.PullRequestEvent("reopened", pr.Number))
	e.WaitFor(layersWait, func() bool {
		cr, _ := e.Repo.CheckRun(head, networkPlan)
		return cr.ID != first.ID && cr.Conclusion == "success"
	})
	if lock, _ := e.Repo.CheckRun(head, networkLock); lock.Status != "in_progress" || lock.Title != "Locked by #1" {
		t.Errorf("lock check after reopen = %+v", lock)
	}
	noViolations(t, e.GitHub)
}

// A layer whose required_version the binary does not satisfy -> the plan
// check fails, naming the versions the server has (e2e/engines_test.go
// runs it on each engine).
func TestLayersRequiredVersion(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	pr := e.openPR("future", "alice", map[string]string{
		network + "/versions.tf": "terraform {\n  required_version = \">= 99.0\"\n}\n",
	})
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	cr := e.completed(pr.HeadSHA(), networkPlan)
	if cr.Conclusion != "failure" || !strings.Contains(cr.Summary, `required_version ">= 99.0" matches none of the terraform binaries`) {
		t.Fatalf("plan check = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	e.commentWith(pr.Number, "1 failed")
	noViolations(t, e.GitHub)
}

// The autoplan job fails half-way (GitHub refuses the second layer's check
// once) -> its retry starts the layers it had not started, and none twice.
func TestLayersAutoplanRetryFinishesTheBatch(t *testing.T) {
	gh := githubtest.NewServer(t)
	proxy, refused := failOnce(t, gh.URL(), func(r *http.Request, body []byte) bool {
		return r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/check-runs") && strings.Contains(string(body), `"strata/plan: infra/app"`)
	})
	e := startLayers(t, apptest.Options{GitHub: gh, Configure: func(c *config.Server) { c.GitHub.APIURL = proxy + "/api/v3/" }},
		map[string]int{network: 1, "infra/app": 1}, nil)
	pr := e.openPR("grow", "alice", map[string]string{
		network + "/main.tf": e.layerFile(network, 2),
		"infra/app/main.tf":  e.layerFile("infra/app", 2),
	})
	head := pr.HeadSHA()
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	for _, name := range []string{networkPlan, "strata/plan: infra/app"} {
		if cr := e.completed(head, name); cr.Conclusion != "success" {
			t.Errorf("%s = %s %q", name, cr.Conclusion, cr.Title)
		}
	}
	e.commentWith(pr.Number, "2 layers, 2 with changes")
	if refused.Load() != 1 {
		t.Fatal("the check of the second layer was never refused; the test proves nothing")
	}
	for _, name := range []string{networkPlan, "strata/plan: infra/app", networkLock, "strata/lock: infra/app"} {
		if n := len(e.checksNamed(head, name)); n != 1 {
			t.Errorf("%d checks %s, want 1", n, name)
		}
	}
	if n := e.planCount(pr.Number); n != 1 {
		t.Errorf("%d plan comments, want 1", n)
	}
}

func itoa(n int64) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// failOnce is a proxy in front of the fake GitHub that answers 502 to the
// first request matching, once.
func failOnce(t *testing.T, target string, match func(r *http.Request, body []byte) bool) (string, *atomic.Int32) {
	u, _ := url.Parse(target)
	proxy := httputil.NewSingleHostReverseProxy(u)
	var hits atomic.Int32
	var done atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !done.Load() && match(r, body) && done.CompareAndSwap(false, true) {
			hits.Add(1)
			http.Error(w, `{"message":"Server Error"}`, http.StatusBadGateway)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &hits
}
