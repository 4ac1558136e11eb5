package helm

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/kubetest"
)

// childChart writes chart api with a ConfigMap and the template extra
// into a tree, for TestInChild on a real API server.
func childChart(t *testing.T, extra string) Input {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "api")
	files := map[string]string{
		"Chart.yaml":        "apiVersion: v2\nname: api\nversion: 1.2.3\n",
		"templates/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"templates/x.yaml":  extra,
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return Input{Root: filepath.Dir(dir), ChartDir: dir, ReleaseName: "api-pr-7", Timeout: 2 * time.Second}
}

// A chart whose template loops for hours -> TestInChild gives up at the
// timeout and the grace (2s + 2s), and the child is gone: no process of
// this binary but the test's own, no goroutine in text/template. The
// control: the same chart without the loop installs from the child and
// its report says revision 1, deployed.
func TestInChildKillsALoopingRender(t *testing.T) {
	c, namespace := kubetest.Namespace(t)
	k := Kube{Kubeconfig: c.Kubeconfig, Context: c.Context}
	defer func(g time.Duration) { renderGrace = g }(renderGrace)
	renderGrace = 2 * time.Second

	in := childChart(t, "{{- range $i := until 100000 }}{{- range $j := until 100000 }}{{- end }}{{- end }}\n")
	in.Namespace = namespace
	start := time.Now()
	rep, err := TestInChild(context.Background(), k, in)
	took := time.Since(start)
	if !errors.Is(err, ErrRenderTimeout) || rep != nil {
		t.Fatalf("TestInChild = %+v, %v; want ErrRenderTimeout", rep, err)
	}
	if want := "release api-pr-7: the chart's templates did not render in time: stopped after 4s (the test timeout 2s and 2s to reach the cluster); make them faster, or set a longer test.timeout"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if took > 8*time.Second {
		t.Errorf("TestInChild returned after %s, want about 4s", took)
	}
	buf := make([]byte, 1<<20)
	if stacks := string(buf[:runtime.Stack(buf, true)]); strings.Contains(stacks, "text/template") {
		t.Errorf("a goroutine still renders:\n%s", stacks)
	}
	if pids := othersOfThisBinary(t); len(pids) > 0 {
		t.Errorf("processes of this binary still run: %v", pids)
	}

	in = childChart(t, "{{/* no loop */}}\n")
	in.Namespace, in.Timeout = namespace, time.Minute
	rep, err = TestInChild(context.Background(), k, in)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Action != "install" || rep.Revision != 1 || rep.Status != "deployed" || rep.ChartName != "api" {
		t.Errorf("report = action %q, revision %d, status %q, chart %q", rep.Action, rep.Revision, rep.Status, rep.ChartName)
	}
}

// A template that allocates beyond the child's heap (3.2 GB of integers)
// -> the child dies of it, and the server says so; the server's own heap
// never held it.
func TestInChildBoundsMemory(t *testing.T) {
	c, namespace := kubetest.Namespace(t)
	in := childChart(t, "{{- $n := until 400000000 }}{{ len $n }}\n")
	in.Namespace = namespace
	_, err := TestInChild(context.Background(), Kube{Kubeconfig: c.Kubeconfig, Context: c.Context}, in)
	if !errors.Is(err, ErrChartTooLarge) || !strings.Contains(err.Error(), "needed more than 2147483648 bytes of memory") {
		t.Fatalf("err = %v, want the memory bound", err)
	}
}

// othersOfThisBinary lists the processes, other than this one, running
// the test binary: TestInChild's children are re-executions of it.
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
