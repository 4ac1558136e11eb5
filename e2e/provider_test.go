package e2e

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform/testprovider/providertest"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/seal"
)

// providerEnv is layersEnv with layers that use the test provider
// (strata.test/strata/world), installed from a filesystem mirror through
// the server's terraform.cli_config, as an operator who mirrors providers
// does. The provider's real world is a dir the sandbox opens read-write,
// as an operator lists what a provider must reach.
type providerEnv struct {
	*layersEnv
	provider providertest.Installed
	world    providertest.World
}

// startProviderLayers starts Strata with the default branch holding the
// given layers of world_things.
func startProviderLayers(t *testing.T, opts apptest.Options, layers map[string][]providertest.Thing) *providerEnv {
	t.Helper()
	return startProviderLayersFrom(t, providertest.Install(t), opts, layers)
}

// startProviderLayersFrom is startProviderLayers with the provider
// installed as given.
func startProviderLayersFrom(t *testing.T, installed providertest.Installed, opts apptest.Options, layers map[string][]providertest.Thing) *providerEnv {
	t.Helper()
	requireTerraform(t)
	p := &providerEnv{layersEnv: &layersEnv{state: t.TempDir()}, provider: installed, world: providertest.NewWorld(t)}
	p = p.another(t, opts)
	files := map[string]string{}
	for dir, things := range layers {
		files[dir+"/main.tf"] = p.layer(dir, things...)
	}
	p.Repo.Commit("main", files, "Add layers")
	return p
}

// another starts a Strata server on the layers and the world of p.
func (p *providerEnv) another(t *testing.T, opts apptest.Options) *providerEnv {
	t.Helper()
	configure := opts.Configure
	opts.Configure = func(c *config.Server) {
		c.Terraform.CLIConfig = p.provider.CLIConfig
		c.Terraform.SandboxPaths.ReadWrite = append(c.Terraform.SandboxPaths.ReadWrite, p.world.Dir)
		if configure != nil {
			configure(c)
		}
	}
	return &providerEnv{layersEnv: p.layersEnv.another(t, opts), provider: p.provider, world: p.world}
}

// layer is the main.tf of a layer of things, its state in the env's state
// dir.
func (p *providerEnv) layer(dir string, things ...providertest.Thing) string {
	return providertest.LayerWithState(p.world.Dir, filepath.Join(p.state, strings.ReplaceAll(dir, "/", "_"), "terraform.tfstate"), things...)
}

// /plan then /apply of a layer using the provider -> the things exist in
// the real world; the real world changed behind Terraform's back -> the
// next plan shows the drift, and applying it puts the value back.
func TestProviderPlanApplyAndDrift(t *testing.T) {
	e := startProviderLayers(t, apptest.Options{}, map[string][]providertest.Thing{network: nil})
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layer(network,
		providertest.Thing{Name: "a", Value: "one"}, providertest.Thing{Name: "b", Value: "two"})})
	head := pr.HeadSHA()

	e.comment(pr.Number, "alice", "/plan")
	plan := e.completed(head, networkPlan)
	if plan.Conclusion != "success" || plan.Title != "2 to add, 0 to change, 0 to destroy" || !strings.Contains(plan.Text, "world_thing.a") {
		t.Fatalf("plan = %s %q %q", plan.Conclusion, plan.Title, plan.Text)
	}
	if names := e.world.Names(t); len(names) != 0 {
		t.Fatalf("the plan changed the real world: %v", names)
	}
	e.comment(pr.Number, "alice", "/apply")
	if apply := e.completed(head, networkApply); apply.Conclusion != "success" || !strings.Contains(apply.Text, "Apply complete! Resources: 2 added") {
		t.Fatalf("apply = %s %q %q", apply.Conclusion, apply.Title, apply.Text)
	}
	if v, ok := e.world.Get(t, "a"); !ok || v != "one" {
		t.Fatalf("thing a in the real world = %q, %v", v, ok)
	}

	e.world.Set(t, "a", "changed-by-hand")
	e.comment(pr.Number, "alice", "/plan")
	e.WaitFor(layersWait, func() bool {
		runs := e.checksNamed(head, networkPlan)
		return len(runs) == 2 && runs[1].Status == "completed"
	})
	drift := e.checksNamed(head, networkPlan)[1]
	if drift.Conclusion != "success" || drift.Title != "0 to add, 1 to change, 0 to destroy" ||
		!strings.Contains(drift.Text, "changed-by-hand") || !strings.Contains(drift.Text, "world_thing.a") {
		t.Fatalf("plan after the drift = %s %q %q", drift.Conclusion, drift.Title, drift.Text)
	}
	e.comment(pr.Number, "alice", "/apply")
	e.WaitFor(layersWait, func() bool {
		runs := e.checksNamed(head, networkApply)
		return len(runs) == 2 && runs[1].Conclusion == "success"
	})
	if v, _ := e.world.Get(t, "a"); v != "one" {
		t.Errorf("thing a after applying the drift away = %q", v)
	}
	noViolations(t, e.GitHub)
}

// A push after /plan -> /apply refuses the old plan as stale, and the real
// world is left alone.
func TestProviderStalePlanRefused(t *testing.T) {
	e := startProviderLayers(t, apptest.Options{}, map[string][]providertest.Thing{network: nil})
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layer(network, providertest.Thing{Name: "a", Value: "one"})})
	e.comment(pr.Number, "alice", "/plan")
	if cr := e.completed(pr.HeadSHA(), networkPlan); cr.Conclusion != "success" {
		t.Fatalf("plan = %+v", cr)
	}
	head := pr.Push(map[string]string{"README.md": "changed\n"}, "Docs")
	e.Deliver(e.Repo.PullRequestEvent("synchronize", pr.Number))
	e.WaitFor(layersWait, func() bool { _, ok := e.Repo.CheckRun(head, networkLock); return ok })

	e.comment(pr.Number, "alice", "/apply")
	e.commentWith(pr.Number, "plan is stale, run /plan")
	if cr := e.completed(head, networkApply); cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "plan is stale, run /plan") {
		t.Errorf("apply check = %+v", cr)
	}
	e.WaitIdle(layersWait)
	if names := e.world.Names(t); len(names) != 0 {
		t.Errorf("a stale plan changed the real world: %v", names)
	}
	noViolations(t, e.GitHub)
}

// The provider fails the apply -> the apply check fails with the
// provider's error as Terraform reports it.
func TestProviderApplyFailureInTheCheck(t *testing.T) {
	e := startProviderLayers(t, apptest.Options{}, map[string][]providertest.Thing{network: nil})
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("fail", "alice", map[string]string{network + "/main.tf": e.layer(network,
		providertest.Thing{Name: "ok", Value: "fine"}, providertest.Thing{Name: "bad", Value: "x", FailOnApply: true})})
	head := pr.HeadSHA()
	e.comment(pr.Number, "alice", "/plan")
	if cr := e.completed(head, networkPlan); cr.Conclusion != "success" {
		t.Fatalf("plan = %+v", cr)
	}
	e.comment(pr.Number, "alice", "/apply")
	cr := e.completed(head, networkApply)
	text := cr.Title + "\n" + cr.Summary + "\n" + cr.Text
	if cr.Conclusion != "failure" || !strings.Contains(text, "world_thing bad: failing on apply as told") || !strings.Contains(text, "fail_on_apply is true") {
		t.Fatalf("apply check = %s %q %q %q", cr.Conclusion, cr.Title, cr.Summary, cr.Text)
	}
	c := e.commentWith(pr.Number, "Terraform apply")
	if !strings.Contains(c.Body, "failing on apply as told") {
		t.Errorf("apply comment = %q", c.Body)
	}
	if _, ok := e.world.Get(t, "bad"); ok {
		t.Error("the failed thing exists in the real world")
	}
	noViolations(t, e.GitHub)
}

// A provider attribute marked sensitive (world_thing.secret) -> its value
// reaches the real world, never a check, a comment, a run log, the stored
// plan report or the plans table.
func TestProviderSensitiveAttributeNeverLeaks(t *testing.T) {
	e := startProviderLayers(t, apptest.Options{}, map[string][]providertest.Thing{network: nil})
	e.Repo.SetPermission("alice", "write")
	secret := "world-secret-" + leakTail
	pr := e.openPR("secret", "alice", map[string]string{network + "/main.tf": e.layer(network,
		providertest.Thing{Name: "s", Value: "visible", Secret: secret})})
	head := pr.HeadSHA()

	e.comment(pr.Number, "alice", "/plan")
	plan := e.completed(head, networkPlan)
	if plan.Conclusion != "success" || !strings.Contains(plan.Text, "(sensitive value)") {
		t.Fatalf("plan = %s %q %q", plan.Conclusion, plan.Title, plan.Text)
	}
	raw := storedPlans(t, e.Server.Store())
	if len(raw) != 1 || bytes.Contains(raw[0], []byte(leakTail)) || !seal.IsSealed(raw[0]) {
		t.Fatalf("plans at rest = %q, want one sealed plan", raw)
	}
	e.comment(pr.Number, "alice", "/apply")
	if apply := e.completed(head, networkApply); apply.Conclusion != "success" {
		t.Fatalf("apply = %s %q %q", apply.Conclusion, apply.Title, apply.Text)
	}
	e.commentWith(pr.Number, "Terraform apply")
	// Drift on the visible value: the plan shows it, and the secret stays
	// masked in the diff of a thing that changes.
	e.world.Set(t, "s", "drifted")
	e.comment(pr.Number, "alice", "/plan")
	e.WaitFor(layersWait, func() bool {
		runs := e.checksNamed(head, networkPlan)
		return len(runs) == 2 && runs[1].Status == "completed"
	})
	if cr := e.checksNamed(head, networkPlan)[1]; cr.Title != "0 to add, 1 to change, 0 to destroy" {
		t.Errorf("plan after drift = %s %q", cr.Conclusion, cr.Title)
	}
	e.WaitIdle(layersWait)
	b, err := os.ReadFile(filepath.Join(e.world.Dir, "s.json"))
	if err != nil || !strings.Contains(string(b), secret) {
		t.Fatalf("the real world lacks the secret (the test proves nothing): %q %v", b, err)
	}
	noLeak(t, e.layersEnv, head, pr.Number)
	noViolations(t, e.GitHub)
}

// The server is killed while the provider applies (a slow thing) -> after
// a restart the apply is reported interrupted and never run again.
func TestProviderApplyKilledMidRun(t *testing.T) {
	e := newCrashEnv(t)
	installed, world := providertest.Install(t), providertest.NewWorld(t)
	t.Setenv(config.CLIConfigEnv, installed.CLIConfig)
	t.Setenv("STRATA_TERRAFORM_SANDBOX_READ_WRITE", e.state+string(os.PathListSeparator)+world.Dir)
	p := &providerEnv{layersEnv: e.layersEnv, provider: installed, world: world}
	e.repo.Commit("grow", map[string]string{network + "/main.tf": p.layer(network,
		providertest.Thing{Name: "slow", Value: "v", ApplyDelayMS: 60_000})}, "Slow")
	e.repo.SetPermission("alice", "write")
	pr := e.repo.OpenPR("grow", "main", "alice")
	head := pr.HeadSHA()

	first := e.start()
	first.deliver(e.repo.IssueCommentEvent(pr.Number, "alice", "/plan"))
	if cr := e.waitCheck(head, networkPlan, completedCheck); cr.Conclusion != "success" {
		t.Fatalf("plan = %+v", cr)
	}
	first.deliver(e.repo.IssueCommentEvent(pr.Number, "alice", "/apply"))
	// Terraform applies and the provider it started waits on the thing.
	e.gh.WaitFor(t, layersWait, func() bool {
		return runsBelow(first.cmd.Process.Pid, "apply") && providerBelow(first.cmd.Process.Pid)
	})
	kill(t, first)
	if cr, _ := e.repo.CheckRun(head, networkApply); cr.Status == "completed" {
		t.Fatal("the apply finished before the kill; the test proves nothing")
	}

	second := e.start()
	cr := e.waitCheck(head, networkApply, completedCheck)
	if cr.Conclusion != "failure" || cr.Title != "Apply interrupted" || !strings.Contains(cr.Summary, "Check the layer's state") {
		t.Fatalf("apply check after restart = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	second.deliver(e.repo.IssueCommentEvent(pr.Number, "alice", "/apply"))
	waitComment(t, e.gh, e.repo, pr.Number, "already applied")
	e.waitIdle()
	if names := world.Names(t); len(names) != 0 {
		t.Fatalf("the interrupted apply was run again: the world holds %v", names)
	}
	if l := e.lockOf(network); l.PR != pr.Number {
		t.Fatalf("lock after the interrupted apply held by #%d", l.PR)
	}
	noViolations(t, e.gh)
}

// providerBelow reports whether the test provider runs below pid.
func providerBelow(pid int) bool {
	for _, p := range sandbox.Descendants(pid) {
		exe, err := os.Readlink(filepath.Join("/proc", itoa(int64(p)), "exe"))
		if err == nil && strings.HasPrefix(filepath.Base(exe), "terraform-provider-world") {
			return true
		}
	}
	return false
}
