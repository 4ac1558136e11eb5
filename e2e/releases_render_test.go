package e2e

import (
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
)

// loopTemplate renders nothing after 10^10 iterations: hours of one CPU.
const loopTemplate = "{{- range $i := until 100000 }}{{- range $j := until 100000 }}{{- end }}{{- end }}\n"

// A writer's PR adds a template that loops for hours, /helm-test api ->
// the check fails within the release's timeout (10s) and the render grace
// (30s), saying the chart did not render, and afterwards nothing renders
// it still: no goroutine of the server is in text/template and no process
// of this binary but the test's own is alive. Then the PR drops the loop
// and /helm-test passes (the control): the killed install left nothing in
// the way.
func TestReleasesHelmTestLoopingTemplateStops(t *testing.T) {
	e := startReleases(t, releaseOpts{timeout: "10s"}, apptest.Options{})
	e.wait = time.Minute // 40s and a margin: a check still rendering after it is the attack's win
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("loop", "alice", map[string]string{"charts/api/templates/loop.yaml": loopTemplate})

	start := time.Now()
	e.comment(pr.Number, "alice", "/helm-test api")
	cr := e.completed(pr.HeadSHA(), apiCheck)
	took := time.Since(start)
	if cr.Conclusion != "failure" || cr.Title != "Helm test could not run" {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	wantText(t, "check summary", cr.Summary, "release api-pr-1: the chart's templates did not render in time: stopped after 40s (the test timeout 10s and 30s to reach the cluster)")
	if took > 50*time.Second {
		t.Errorf("the check failed after %s, want within the timeout and the grace (40s)", took)
	}
	e.WaitIdle(time.Minute)
	if stacks := goroutines(); strings.Contains(stacks, "text/template") {
		t.Errorf("a goroutine still renders the chart:\n%s", stacks)
	}
	if pids := othersOfThisBinary(t); len(pids) > 0 {
		t.Errorf("processes of this binary still run: %v", pids)
	}

	e.Repo.Commit("loop", map[string]string{"charts/api/templates/loop.yaml": "{{/* no loop */}}\n"}, "Drop the loop")
	e.comment(pr.Number, "alice", "/helm-test api")
	cr = e.completed(pr.HeadSHA(), apiCheck)
	if cr.Conclusion != "success" || cr.Title != "Passed: 3 tests at revision 1" {
		t.Fatalf("check without the loop = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
}

func goroutines() string {
	buf := make([]byte, 1<<20)
	return string(buf[:runtime.Stack(buf, true)])
}

// othersOfThisBinary lists the processes, other than this one, running
// the test binary: the children Strata starts are re-executions of it.
func othersOfThisBinary(t *testing.T) []int {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if exe, err := os.Readlink(filepath.Join("/proc", ent.Name(), "exe")); err == nil && exe == self {
			pids = append(pids, pid)
		}
	}
	return pids
}
