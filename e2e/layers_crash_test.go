package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// crashEnv is acme/infra with one layer, served by real `strata serve`
// processes that the test kills.
type crashEnv struct {
	*layersEnv
	gh           *githubtest.Server
	repo         *githubtest.Repo
	db, dataDir  string
	stateOfLayer string
}

func newCrashEnv(t *testing.T) *crashEnv {
	requireTerraform(t)
	t.Setenv(terraform.BinaryEnv, apptest.TerraformBin(t))
	gh := githubtest.NewServer(t)
	repo := gh.AddRepo("acme", "infra")
	e := &crashEnv{layersEnv: &layersEnv{scenario: scenario{t: t, wait: layersWait}, state: t.TempDir()}, gh: gh, repo: repo,
		db: storetest.URL(t, store.SQLite), dataDir: t.TempDir()}
	// The servers' Terraform runs sandboxed: open the layer's state to it.
	t.Setenv("STRATA_TERRAFORM_SANDBOX_READ_WRITE", e.state)
	repo.Commit("main", map[string]string{network + "/main.tf": e.layerFile(network, 1)}, "Add layers")
	return e
}

func (e *crashEnv) start() *process { return startProcess(e.t, e.gh, e.gh.URL(), e.db, e.dataDir, 2) }

// kill SIGKILLs the server and every process it started (Terraform, its
// provisioners), as when its container dies.
func kill(t *testing.T, p *process) {
	t.Helper()
	pids := sandbox.Descendants(p.cmd.Process.Pid)
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	<-p.done
}

// runsBelow reports whether a process below pid runs with arg among its
// arguments (Terraform's subcommand).
func runsBelow(pid int, arg string) bool {
	for _, p := range sandbox.Descendants(pid) {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(cmdline), "\x00") {
			if a == arg {
				return true
			}
		}
	}
	return false
}

// waitIdle waits until the servers' queue is at rest.
func (e *crashEnv) waitIdle() {
	e.t.Helper()
	st, err := store.Open(context.Background(), e.db, e.t.TempDir())
	if err != nil {
		e.t.Fatal(err)
	}
	defer st.Close()
	apptest.WaitIdle(e.t, st, layersWait)
}

func (e *crashEnv) lockOf(layer string) *store.Lock {
	e.t.Helper()
	st, err := store.Open(context.Background(), e.db, e.t.TempDir())
	if err != nil {
		e.t.Fatal(err)
	}
	defer st.Close()
	l, err := st.Lock(context.Background(), "acme/infra", layer)
	if err != nil {
		e.t.Fatalf("lock of %s: %v", layer, err)
	}
	return l
}

func (e *crashEnv) waitCheck(sha, name string, cond func(githubtest.CheckRun) bool) githubtest.CheckRun {
	e.t.Helper()
	var cr githubtest.CheckRun
	e.gh.WaitFor(e.t, layersWait, func() bool {
		var ok bool
		cr, ok = e.repo.CheckRun(sha, name)
		return ok && cond(cr)
	})
	return cr
}

func completedCheck(cr githubtest.CheckRun) bool { return cr.Status == "completed" }

// The server is killed while Terraform plans -> after a restart the plan
// is retried and completes; the lock stays with its PR throughout.
func TestLayersPlanKilledMidRun(t *testing.T) {
	e := newCrashEnv(t)
	e.repo.Commit("grow", map[string]string{network + "/main.tf": e.layerFile(network, 2000)}, "Grow")
	pr := e.repo.OpenPR("grow", "main", "alice")
	head := pr.HeadSHA()

	first := e.start()
	first.deliver(e.repo.IssueCommentEvent(pr.Number, "alice", "/plan"))
	running := e.waitCheck(head, networkPlan, func(cr githubtest.CheckRun) bool { return cr.Status == "in_progress" })
	// Into Terraform's plan: its process runs under the server.
	e.gh.WaitFor(t, layersWait, func() bool { return runsBelow(first.cmd.Process.Pid, "plan") })
	kill(t, first)
	if cr, _ := e.repo.CheckRun(head, networkPlan); cr.Status == "completed" {
		t.Fatal("the plan finished before the kill; the test proves nothing")
	}
	if l := e.lockOf(network); l.PR != pr.Number {
		t.Fatalf("lock after the kill held by #%d", l.PR)
	}

	e.start()
	done := e.waitCheck(head, networkPlan, completedCheck)
	if done.ID != running.ID || done.Conclusion != "success" || done.Title != "2000 to add, 0 to change, 0 to destroy" {
		t.Fatalf("plan after restart = check %d (was %d) %s %q", done.ID, running.ID, done.Conclusion, done.Title)
	}
	if l := e.lockOf(network); l.PR != pr.Number {
		t.Fatalf("lock after the restart held by #%d", l.PR)
	}
	if lock, _ := e.repo.CheckRun(head, networkLock); lock.Status != "in_progress" || lock.Title != "Locked by #1" {
		t.Errorf("lock check = %+v", lock)
	}
	e.gh.WaitFor(t, layersWait, func() bool { return countComments(e.repo, pr.Number, "Terraform plan:") == 1 })
	noViolations(t, e.gh)
}

// The server is killed while Terraform applies -> after a restart the apply
// is reported interrupted (check and comment, with the note to check the
// state), is never run again, and the PR keeps the lock.
func TestLayersApplyKilledMidRun(t *testing.T) {
	e := newCrashEnv(t)
	marker := filepath.Join(e.state, "applied") // where the sandbox lets the provisioner write
	slow := "resource \"terraform_data\" \"slow\" {\n  provisioner \"local-exec\" {\n    command = \"echo run >> " + marker + "; sleep 5\"\n  }\n}\n"
	e.repo.Commit("grow", map[string]string{network + "/slow.tf": slow}, "Slow")
	e.repo.SetPermission("alice", "write")
	pr := e.repo.OpenPR("grow", "main", "alice")
	head := pr.HeadSHA()

	first := e.start()
	first.deliver(e.repo.IssueCommentEvent(pr.Number, "alice", "/plan"))
	if cr := e.waitCheck(head, networkPlan, completedCheck); cr.Conclusion != "success" {
		t.Fatalf("plan = %+v", cr)
	}
	first.deliver(e.repo.IssueCommentEvent(pr.Number, "alice", "/apply"))
	e.gh.WaitFor(t, layersWait, func() bool { return runsOf(marker) == 1 })
	kill(t, first)
	if cr, _ := e.repo.CheckRun(head, networkApply); cr.Status == "completed" {
		t.Fatal("the apply finished before the kill; the test proves nothing")
	}

	second := e.start()
	cr := e.waitCheck(head, networkApply, completedCheck)
	if cr.Conclusion != "failure" || cr.Title != "Apply interrupted" || !strings.Contains(cr.Summary, "Check the layer's state") {
		t.Fatalf("apply check after restart = %s %q %q", cr.Conclusion, cr.Title, cr.Summary)
	}
	c := waitComment(t, e.gh, e.repo, pr.Number, "Terraform apply interrupted")
	if !strings.Contains(c.Body, "Check the layer's state") || !strings.Contains(c.Body, "keeps the lock") {
		t.Errorf("interrupted comment = %q", c.Body)
	}
	// Asked again, Strata still does not apply the plan a second time.
	second.deliver(e.repo.IssueCommentEvent(pr.Number, "alice", "/apply"))
	waitComment(t, e.gh, e.repo, pr.Number, "already applied")
	e.waitIdle()
	if n := runsOf(marker); n != 1 {
		t.Fatalf("the apply ran %d times", n)
	}
	if l := e.lockOf(network); l.PR != pr.Number {
		t.Fatalf("lock after the interrupted apply held by #%d", l.PR)
	}
	if lock, _ := e.repo.CheckRun(head, networkLock); lock.Status != "in_progress" || lock.Title != "Locked by #1" {
		t.Errorf("lock check = %+v", lock)
	}
	noViolations(t, e.gh)
}

func runsOf(marker string) int {
	b, _ := os.ReadFile(marker)
	return strings.Count(string(b), "run\n")
}

func countComments(repo *githubtest.Repo, pr int, text string) int {
	n := 0
	for _, c := range repo.Comments(pr) {
		if strings.Contains(c.Body, text) {
			n++
		}
	}
	return n
}

func waitComment(t *testing.T, gh *githubtest.Server, repo *githubtest.Repo, pr int, text string) githubtest.Comment {
	t.Helper()
	var found githubtest.Comment
	gh.WaitFor(t, layersWait, func() bool {
		for _, c := range repo.Comments(pr) {
			if strings.Contains(c.Body, text) {
				found = c
				return true
			}
		}
		return false
	})
	return found
}
