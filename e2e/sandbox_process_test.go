package e2e

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/sandbox"
)

// daemonLayer is a layer whose apply starts, from a local-exec
// provisioner, a daemon (setsid, in the background: the provisioner
// returns at once) and a child it waits for when wait is set. Both carry
// token in their environment, for the test to find them.
func daemonLayer(token string, wait bool) string {
	command := "STRATA_E2E_PROCESS=" + token + " setsid sleep 600 </dev/null >/dev/null 2>&1 &"
	if wait {
		command += " STRATA_E2E_PROCESS=" + token + " sleep 600"
	}
	return "resource \"terraform_data\" \"daemon\" {\n  provisioner \"local-exec\" {\n    command = " + strconv.Quote(command) + "\n  }\n}\n"
}

// processesWith are the live processes whose environment holds token.
func processesWith(token string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !strings.Contains(string(env), "STRATA_E2E_PROCESS="+token+"\x00") {
			continue
		}
		if stat, err := os.ReadFile("/proc/" + e.Name() + "/stat"); err == nil {
			if f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:])); len(f) > 0 && f[0] != "Z" {
				out = append(out, pid)
			}
		}
	}
	return out
}

func killAll(pids []int) {
	for _, p := range pids {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}

// A PR's provisioner daemonizes a process (setsid, in the background) and
// its apply succeeds -> when the apply's check completes, the daemon is
// gone. The control: with `terraform.sandbox: off`, as every run was
// before, the daemon outlives the run. The plan and apply of the layer,
// with its state, are the positive control that a normal layer still works.
func TestARunsDaemonEndsWithIt(t *testing.T) {
	for _, tc := range []struct {
		mode     string
		survives bool
	}{{"on", false}, {"off", true}} {
		t.Run(tc.mode, func(t *testing.T) {
			e := startLayers(t, apptest.Options{Configure: func(c *config.Server) { c.Terraform.Sandbox = tc.mode }}, map[string]int{network: 1}, nil)
			token := randomHex(t)
			t.Cleanup(func() { killAll(processesWith(token)) })
			e.Repo.SetPermission("alice", "write")
			pr := e.openPR("daemon", "alice", map[string]string{network + "/daemon.tf": daemonLayer(token, false)})
			e.comment(pr.Number, "alice", "/plan")
			if plan := e.completed(pr.HeadSHA(), networkPlan); plan.Conclusion != "success" {
				t.Fatalf("plan: %s %q\n%s", plan.Conclusion, plan.Title, plan.Text)
			}
			e.comment(pr.Number, "alice", "/apply")
			apply := e.completed(pr.HeadSHA(), networkApply)
			if apply.Conclusion != "success" || !strings.Contains(apply.Text, "Apply complete!") {
				t.Fatalf("apply: %s %q\n%s", apply.Conclusion, apply.Title, apply.Text)
			}
			left := processesWith(token)
			if tc.survives && len(left) != 1 {
				t.Errorf("unconfined, the daemon did not outlive its run (%v): the test proves nothing", left)
			}
			if !tc.survives && len(left) > 0 {
				t.Errorf("the apply completed; its daemon %v still runs", left)
			}
		})
	}
}

// A real `strata serve` applies a layer whose provisioner waits for a
// child, beside a daemon it started -> Strata is SIGKILLed (its container
// dies) -> within a second both are gone. The control: unconfined, they
// run on after Strata is gone, as they did before.
func TestAProvisionersProcessesDieWithStrata(t *testing.T) {
	for _, tc := range []struct {
		mode     string
		survives bool
	}{{"on", false}, {"off", true}} {
		t.Run(tc.mode, func(t *testing.T) {
			e := newCrashEnv(t)
			t.Setenv("STRATA_TERRAFORM_SANDBOX", tc.mode)
			token := randomHex(t)
			t.Cleanup(func() { killAll(processesWith(token)) })
			srv := e.start()
			e.repo.Commit("daemon", map[string]string{network + "/daemon.tf": daemonLayer(token, true)}, "A provisioner that runs on")
			e.repo.SetPermission("alice", "write")
			pr := e.repo.OpenPR("daemon", "main", "alice")
			head := pr.HeadSHA()
			srv.deliver(e.repo.IssueCommentEvent(pr.Number, "alice", "/plan"))
			if cr := e.waitCheck(head, networkPlan, completedCheck); cr.Conclusion != "success" {
				t.Fatalf("plan: %s %q\n%s", cr.Conclusion, cr.Title, cr.Text)
			}
			srv.deliver(e.repo.IssueCommentEvent(pr.Number, "alice", "/apply"))
			e.gh.WaitFor(t, layersWait, func() bool { return len(processesWith(token)) == 2 })

			_ = srv.cmd.Process.Signal(syscall.SIGKILL)
			<-srv.done
			killed := time.Now()
			for len(processesWith(token)) > 0 && time.Since(killed) < time.Second {
				time.Sleep(10 * time.Millisecond) // polling the condition, up to its deadline
			}
			left := processesWith(token)
			if tc.survives && len(left) != 2 {
				t.Errorf("unconfined, the provisioner's processes did not outlive Strata (%v): the test proves nothing", left)
			}
			if !tc.survives && len(left) > 0 {
				t.Errorf("a second after Strata was killed, its run's processes %v still run", left)
			}
		})
	}
}

// A host that lacks protections, played by capping the sandbox here at
// Linux 6.1's Landlock (ABI 2) for a server that is not root: with
// `terraform.sandbox: best_effort` the plan and the apply run, and each
// run's log opens with what it lacks; with `on` the plan is refused, and
// its check says what is missing and what to do.
func TestBestEffortNamesWhatIsMissingInEveryRun(t *testing.T) {
	older := func(mode string) apptest.Options {
		return apptest.Options{Configure: func(c *config.Server) {
			c.Terraform.Sandbox = mode
			c.Terraform.SandboxTest = sandbox.Cap{MaxABI: 2, NotRoot: true}
		}}
	}
	e := startLayers(t, older("best_effort"), map[string]int{network: 1}, nil)
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	e.comment(pr.Number, "alice", "/plan")
	if plan := e.completed(pr.HeadSHA(), networkPlan); plan.Conclusion != "success" {
		t.Fatalf("plan: %s %q\n%s", plan.Conclusion, plan.Title, plan.Text)
	}
	e.comment(pr.Number, "alice", "/apply")
	if apply := e.completed(pr.HeadSHA(), networkApply); apply.Conclusion != "success" {
		t.Fatalf("apply: %s %q\n%s", apply.Conclusion, apply.Title, apply.Text)
	}
	e.WaitIdle(layersWait)
	// Truncation is kept there by the seccomp filter; signals are not.
	want := "[strata] sandbox best_effort: this run lacks 2 of the sandbox's protections (server config terraform.sandbox: best_effort)\n" +
		"[strata]   missing no signal to Strata: signals are scoped from Landlock ABI 6 (this host: 2)"
	for _, kind := range []string{"layer_plan", "layer_apply"} {
		logs := runLogs(t, e.Server.Store(), kind, "")
		if len(logs) == 0 {
			t.Fatalf("no %s run", kind)
		}
		for _, log := range logs {
			// Before anything of Terraform's (after the slot's line).
			if i := strings.Index(log, want); i < 0 || i > strings.Index(log, "[strata] terraform ") || strings.Contains(log, "missing no write or truncate") || !strings.Contains(log, "missing no process outliving the run") {
				t.Errorf("the %s log does not open with what it lacks:\n%s", kind, log)
			}
		}
	}

	refused := e.another(t, older("on"))
	pr2 := refused.openPR("grow-more", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 3)})
	refused.comment(pr2.Number, "alice", "/plan")
	plan := refused.completed(pr2.HeadSHA(), networkPlan)
	if plan.Conclusion != "failure" || !strings.Contains(plan.Summary+plan.Text, "no signal to Strata") || !strings.Contains(plan.Summary+plan.Text, "sandbox: best_effort") {
		t.Errorf("with on, the plan %s:\n%s\n%s", plan.Conclusion, plan.Summary, plan.Text)
	}
}
