package e2e

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

const (
	network      = "infra/network"
	networkPlan  = "strata/plan: infra/network"
	networkLock  = "strata/lock: infra/network"
	networkApply = "strata/apply: infra/network"
)

// PR #1 opened touching a layer -> autoplanned: plan check with buttons, lock
// check naming #1, one comment with the plan.
func TestLayersAutoplanOnOpen(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1, "infra/app": 1}, nil)
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 3)})
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))

	head := pr.HeadSHA()
	plan := e.completed(head, networkPlan)
	if plan.Conclusion != "success" || plan.Title != "3 to add, 0 to change, 0 to destroy" {
		t.Fatalf("plan check = %s %q, want success with 3 to add", plan.Conclusion, plan.Title)
	}
	if got := actionIDs(plan); !slices.Equal(got, []string{"apply", "plan", "unlock"}) {
		t.Errorf("plan buttons = %v", got)
	}
	if plan.ExternalID != "pr:1" || !strings.Contains(plan.Text, "terraform_data.r2") {
		t.Errorf("plan check external id %q, text %q", plan.ExternalID, plan.Text)
	}
	lock, ok := e.Repo.CheckRun(head, networkLock)
	if !ok || lock.Title != "Locked by #1" || !strings.Contains(lock.Summary, "@alice") || !slices.Equal(actionIDs(lock), []string{"unlock"}) {
		t.Errorf("lock check = %+v", lock)
	}
	c := e.commentWith(pr.Number, "Terraform plan:")
	for _, want := range []string{
		"<details><summary><b>infra/network</b> (workspace <code>default</code>, at <code>" + head[:7] + "</code>): Plan: 3 to add, 0 to change, 0 to destroy</summary>",
		"\nNext: `/apply infra/network` to apply, `/unlock infra/network` to drop the plan and the lock.\n",
	} {
		if !strings.Contains(c.Body, want) {
			t.Errorf("plan comment lacks %q: %q", want, c.Body)
		}
	}
	if n := strings.Count(c.Body, "Plan:"); n != 1 {
		t.Errorf("plan comment says \"Plan:\" %d times: %q", n, c.Body)
	}
	if _, ok := e.Repo.CheckRun(head, "strata/plan: infra/app"); ok {
		t.Error("infra/app was planned though the PR does not touch it")
	}
	e.WaitFor(layersWait, func() bool {
		a, ok := e.Repo.CheckRun(head, "strata/applied")
		return ok && a.Status == "in_progress" && a.Title == "1 layer to apply"
	})
	noViolations(t, e.GitHub)
}

// /plan then /apply by a writer -> applied check, strata/applied success, and
// a new /plan comment minimizes the earlier plan comment.
func TestLayersPlanThenApply(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	head := pr.HeadSHA()

	e.comment(pr.Number, "alice", "/plan")
	if plan := e.completed(head, networkPlan); plan.Conclusion != "success" {
		t.Fatalf("plan = %+v", plan)
	}
	if a, _ := e.Repo.CheckRun(head, "strata/applied"); a.Status == "completed" {
		t.Errorf("strata/applied completed before the apply: %+v", a)
	}
	e.comment(pr.Number, "alice", "/apply")
	apply := e.completed(head, networkApply)
	if apply.Conclusion != "success" || !strings.Contains(apply.Text, "Apply complete! Resources: 2 added") {
		t.Fatalf("apply = %s %q %q", apply.Conclusion, apply.Title, apply.Text)
	}
	e.WaitFor(layersWait, func() bool {
		a, _ := e.Repo.CheckRun(head, "strata/applied")
		return a.Conclusion == "success"
	})
	e.commentWith(pr.Number, "Terraform apply")

	// Planning again: no changes now, and the first plan comment is minimized.
	e.comment(pr.Number, "alice", "/plan infra/network")
	e.WaitFor(layersWait, func() bool {
		n := 0
		for _, c := range e.Repo.Comments(pr.Number) {
			if strings.Contains(c.Body, "Terraform plan:") {
				n++
				if n == 1 && !c.Minimized {
					return false
				}
			}
		}
		return n == 2
	})
	e.WaitIdle(layersWait)
	noFailedRuns(t, e.Server.Store())
	// A run's log is for its user: Strata's own bookkeeping (the layer's
	// slot) is in the server's log.
	for _, log := range runLogs(t, e.Server.Store(), "layer_plan", "acme/infra") {
		if strings.Contains(log, " slot ") {
			t.Errorf("a plan's log speaks of the layer's slot:\n%s", log)
		}
	}
	noViolations(t, e.GitHub)
}

// PR #2 plans a layer locked by #1 -> blocked check names #1; after #1 is
// merged, the lock is released and #2's /plan proceeds.
func TestLayersLockBlocksSecondPR(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	one := e.openPR("one", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	e.comment(one.Number, "alice", "/plan")
	e.completed(one.HeadSHA(), networkPlan)

	two := e.openPR("two", "bob", map[string]string{network + "/main.tf": e.layerFile(network, 3)})
	e.comment(two.Number, "bob", "/plan infra/network")
	blocked := e.completed(two.HeadSHA(), networkPlan)
	if blocked.Conclusion != "failure" || blocked.Title != "Locked by #1" || !strings.HasSuffix(blocked.DetailsURL, "/pull/1") {
		t.Fatalf("blocked check = %s %q %q", blocked.Conclusion, blocked.Title, blocked.DetailsURL)
	}

	e.Repo.ClosePR(one.Number, true)
	e.Deliver(e.Repo.PullRequestEvent("closed", one.Number))
	released := e.completed(one.HeadSHA(), networkLock)
	if released.Title != "Lock released" {
		t.Fatalf("lock check of #1 after merge = %+v", released)
	}
	e.comment(two.Number, "bob", "/plan infra/network")
	e.WaitFor(layersWait, func() bool {
		cr, _ := e.Repo.CheckRun(two.HeadSHA(), networkPlan)
		return cr.Conclusion == "success"
	})
	if lock, _ := e.Repo.CheckRun(two.HeadSHA(), networkLock); lock.Title != "Locked by #2" {
		t.Errorf("lock check of #2 = %+v", lock)
	}
	noViolations(t, e.GitHub)
}

// A push after /plan -> /apply refuses the old plan as stale; the lock check
// moved to the new head.
func TestLayersStalePlanRefused(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	old := pr.HeadSHA()
	e.comment(pr.Number, "alice", "/plan")
	e.completed(old, networkPlan)

	head := pr.Push(map[string]string{"README.md": "changed\n"}, "Docs")
	e.Deliver(e.Repo.PullRequestEvent("synchronize", pr.Number))
	e.WaitFor(layersWait, func() bool { _, ok := e.Repo.CheckRun(head, networkLock); return ok })

	e.comment(pr.Number, "alice", "/apply")
	e.commentWith(pr.Number, "plan is stale, run /plan")
	if cr := e.completed(head, networkApply); cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "plan is stale, run /plan") {
		t.Errorf("apply check = %+v", cr)
	}
	noViolations(t, e.GitHub)
}

// A user with read permission -> /apply refused, nothing applied.
func TestLayersApplyNeedsWrite(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("reader", "read")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	e.comment(pr.Number, "alice", "/plan")
	e.completed(pr.HeadSHA(), networkPlan)

	e.comment(pr.Number, "reader", "/apply")
	c := e.commentWith(pr.Number, "refused")
	if !strings.Contains(c.Body, "read permission") || !strings.Contains(c.Body, "write") {
		t.Errorf("refusal = %q", c.Body)
	}
	if cr := e.completed(pr.HeadSHA(), networkApply); cr.Conclusion != "failure" {
		t.Errorf("apply check = %+v", cr)
	}
	noViolations(t, e.GitHub)
}

// The Apply button on the plan check -> applied for the user who clicked.
func TestLayersApplyButton(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("maintainer", "maintain")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	e.comment(pr.Number, "alice", "/plan")
	plan := e.completed(pr.HeadSHA(), networkPlan)

	e.Deliver(e.Repo.CheckRunEvent("requested_action", plan.ID, "apply", "maintainer"))
	apply := e.completed(pr.HeadSHA(), networkApply)
	if apply.Conclusion != "success" || !strings.Contains(apply.Summary, "@maintainer") {
		t.Fatalf("apply = %+v", apply)
	}
	noViolations(t, e.GitHub)
}

// A PR from a fork -> nothing planned, a comment says a maintainer can /plan.
func TestLayersForkNotAutoplanned(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	fork := e.GitHub.AddFork(e.Repo, "mallory")
	fork.Commit("evil", map[string]string{network + "/main.tf": e.layerFile(network, 2)}, "Change")
	pr := e.Repo.OpenPR("mallory:evil", "main", "mallory")
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	c := e.commentWith(pr.Number, "fork")
	if !strings.Contains(c.Body, "maintainer") || !strings.Contains(c.Body, "/plan") {
		t.Errorf("fork comment = %q", c.Body)
	}
	if runs := e.checksNamed(pr.HeadSHA(), networkPlan); len(runs) != 0 {
		t.Errorf("fork PR was planned: %+v", runs)
	}
	noViolations(t, e.GitHub)
}

// The same /plan webhook delivered twice -> one plan, one comment.
func TestLayersRedeliveryRunsOnce(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	payload, event := e.Repo.IssueCommentEvent(pr.Number, "alice", "/plan")
	id := apptest.NewDeliveryID()
	e.DeliverID(id, payload, event)
	e.DeliverID(id, payload, event)
	e.completed(pr.HeadSHA(), networkPlan)
	e.commentWith(pr.Number, "Terraform plan:")
	e.WaitFor(layersWait, func() bool { return len(e.Repo.Reactions(payloadCommentID(payload))) == 1 })
	if runs := e.checksNamed(pr.HeadSHA(), networkPlan); len(runs) != 1 {
		t.Errorf("%d plan checks, want 1", len(runs))
	}
	n := 0
	for _, c := range e.Repo.Comments(pr.Number) {
		if strings.Contains(c.Body, "Terraform plan:") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d plan comments, want 1", n)
	}
}

func payloadCommentID(p map[string]any) int64 {
	switch id := p["comment"].(map[string]any)["id"].(type) {
	case int64:
		return id
	case int:
		return int64(id)
	case float64:
		return int64(id)
	}
	return 0
}

// Plans still queued when the server stops (1 worker, 4 layers, stopped
// while the first plans) -> the next server runs them all, one comment.
func TestLayersRestartWithQueuedPlans(t *testing.T) {
	requireTerraform(t)
	db := storetest.URL(t, store.SQLite)
	data := t.TempDir()
	dirs := []string{"infra/a", "infra/b", "infra/c", "infra/d"}
	base := map[string]int{}
	for _, d := range dirs {
		base[d] = 1
	}
	e := startLayers(t, apptest.Options{DatabaseURL: db, DataDir: data, Workers: 1}, base, nil)
	change := map[string]string{}
	for _, d := range dirs {
		change[d+"/main.tf"] = e.layerFile(d, 300)
	}
	pr := e.openPR("grow", "alice", change)
	head := pr.HeadSHA()
	e.comment(pr.Number, "alice", "/plan")
	e.WaitFor(layersWait, func() bool {
		for _, d := range dirs {
			if cr, _ := e.Repo.CheckRun(head, "strata/plan: "+d); cr.Status == "in_progress" {
				return true
			}
		}
		return false
	})
	e.Stop()
	queued := 0
	for _, d := range dirs {
		if cr, ok := e.Repo.CheckRun(head, "strata/plan: "+d); ok && cr.Status == "queued" {
			queued++
		}
	}
	if queued == 0 {
		t.Fatal("no plan was still queued when the server stopped; the test proves nothing")
	}

	e2 := e.another(t, apptest.Options{DatabaseURL: db, DataDir: data, GitHub: e.GitHub})
	for _, d := range dirs {
		if cr := e2.completed(head, "strata/plan: "+d); cr.Conclusion != "success" {
			t.Errorf("%s after restart = %s %q", d, cr.Conclusion, cr.Title)
		}
	}
	e2.commentWith(pr.Number, "4 layers, 4 with changes")
	if n := e2.planCount(pr.Number); n != 1 {
		t.Errorf("%d plan comments, want 1", n)
	}
	noViolations(t, e.GitHub)
}

// Two replicas on one PostgreSQL, each sent a /plan of the same layer ->
// both plans complete, one after the other (the layer's slot).
func TestLayersTwoReplicas(t *testing.T) {
	requireTerraform(t)
	db := storetest.URL(t, store.Postgres)
	a := startLayers(t, apptest.Options{DatabaseURL: db}, map[string]int{network: 1}, nil)
	b := a.another(t, apptest.Options{DatabaseURL: db, GitHub: a.GitHub})
	pr := a.openPR("grow", "alice", map[string]string{network + "/main.tf": a.layerFile(network, 300)})
	head := pr.HeadSHA()

	var wg sync.WaitGroup
	for _, e := range []*layersEnv{a, b} {
		wg.Add(1)
		go func() { defer wg.Done(); e.comment(pr.Number, "alice", "/plan infra/network") }()
	}
	wg.Wait()
	a.WaitFor(3*layersWait, func() bool {
		runs := a.checksNamed(head, networkPlan)
		done := 0
		for _, cr := range runs {
			if cr.Status == "completed" {
				done++
			}
		}
		return len(runs) == 2 && done == 2
	})
	for _, cr := range a.checksNamed(head, networkPlan) {
		if cr.Conclusion != "success" {
			t.Errorf("plan check %d = %s %q %q", cr.ID, cr.Conclusion, cr.Title, cr.Summary)
		}
	}
	// The runs of the layer never overlapped: each took the slot after the
	// other released it.
	spans := slotSpans("layer", a.Env, b.Env)
	if len(spans) != 2 {
		t.Fatalf("%d plan runs with a slot, want 2: %v", len(spans), spans)
	}
	if spans[0][1] > spans[1][0] && spans[1][1] > spans[0][0] {
		t.Errorf("plans of one layer overlapped: %v", spans)
	}
	noViolations(t, a.GitHub)
}

// A layer that does not parse -> the plan check fails with Terraform's message.
func TestLayersTerraformError(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	pr := e.openPR("broken", "alice", map[string]string{network + "/broken.tf": "resource \"terraform_data\" {\n"})
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	cr := e.completed(pr.HeadSHA(), networkPlan)
	if cr.Conclusion != "failure" || !strings.HasPrefix(cr.Title, "terraform ") || !strings.Contains(cr.Summary, "Error") {
		t.Fatalf("plan check = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	e.commentWith(pr.Number, "1 failed")
	// The run records the check it reported to and what it concluded: its
	// job succeeded, the plan did not (the web UI shows "failure").
	e.WaitIdle(layersWait)
	run, err := e.Server.Store().LatestRun(t.Context(), e.Repo.FullName(), "layer_plan", network)
	if err != nil || run.CheckRunID != cr.ID || run.Conclusion != "failure" {
		t.Errorf("plan run = %+v, %v; want check %d and conclusion failure", run, err, cr.ID)
	}
	noViolations(t, e.GitHub)
}

// Values matching the server's redact patterns, and values Terraform marks
// sensitive, never reach GitHub or the run log.
func TestLayersSecretsRedacted(t *testing.T) {
	e := startLayers(t, apptest.Options{Configure: func(c *config.Server) { c.Redact = []string{`acme-token-[0-9]+`} }},
		map[string]int{network: 1}, nil)
	secret := "resource \"terraform_data\" \"s\" {\n  input = \"acme-token-424242\"\n}\n" +
		"output \"pw\" {\n  value     = \"hunter2-very-secret\"\n  sensitive = true\n}\n"
	pr := e.openPR("secret", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 1), network + "/secret.tf": secret})
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	cr := e.completed(pr.HeadSHA(), networkPlan)
	c := e.commentWith(pr.Number, "Terraform plan:")
	for _, text := range []string{cr.Title, cr.Summary, cr.Text, c.Body} {
		if strings.Contains(text, "acme-token-424242") || strings.Contains(text, "hunter2-very-secret") {
			t.Fatalf("a secret reached GitHub: %q", text)
		}
	}
	if !strings.Contains(cr.Text, "[redacted]") {
		t.Errorf("plan text without the redacted value: %q", cr.Text)
	}
	for _, log := range runLogs(t, e.Server.Store(), "layer_plan", "") {
		if strings.Contains(log, "acme-token-424242") || strings.Contains(log, "hunter2-very-secret") {
			t.Fatalf("a secret reached the run log: %q", log)
		}
	}
}
