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
