package helm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"strata.dev/strata/engine/markdown"
)

func failedReport(logText string) *Report {
	return &Report{
		Release: "api-pr-7", Namespace: ns, Action: "upgrade", Revision: 2, Status: "deployed",
		ChartName: "api", ChartVersion: "1.2.3", AppVersion: "4.5.6", ValuesDigest: "sha256:abc",
		Hooks: []HookResult{
			{Name: "api-test-a", Phase: PhaseSucceeded, Started: time.Now(), Duration: 2 * time.Second,
				Logs: []PodLog{{Pod: "api-test-a", Text: "a ok\n"}}},
			{Name: "api-test-b", Phase: PhaseFailed, Cause: CauseFailed, Err: "pod api-test-b failed", Started: time.Now(),
				Logs: []PodLog{{Pod: "api-test-b", Text: logText}}},
		},
		Writes: []Write{{Op: "create", Release: "api-pr-7", Revision: 2, Status: "pending-upgrade"}},
	}
}

func TestMarkdownCutsLogsToLimitAtCharacterBoundary(t *testing.T) {
	long := strings.Repeat("ünïcödé line with token s3cr3t\n", 5000) + "FINAL ERROR\n"
	rep := failedReport(long)
	rep.Mask([]string{"s3cr3t"})
	const limit = 8000
	md := rep.Markdown(limit)
	if len(md) > limit {
		t.Fatalf("len = %d > %d", len(md), limit)
	}
	if !utf8.ValidString(md) {
		t.Fatalf("markdown is not valid UTF-8")
	}
	for _, want := range []string{"| `api-test-b` | ❌ Failed |", "FINAL ERROR", "earlier bytes cut", "revision **2**", "1.2.3", "4.5.6", "sha256:abc", "Release writes"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q", want)
		}
	}
	if strings.Contains(md, "s3cr3t") {
		t.Errorf("secret not masked")
	}
	// Whatever the limit, the body stays within it and valid.
	for _, l := range []int{10, 300, 1000, 2001} {
		if md := rep.Markdown(l); len(md) > l || !utf8.ValidString(md) {
			t.Errorf("limit %d: len %d valid %v", l, len(md), utf8.ValidString(md))
		}
	}
}

// Whatever the limit, the logs' fences are balanced: a cut never leaves the
// rest of the check run rendered as code.
func TestMarkdownCutLeavesNoFenceOpen(t *testing.T) {
	rep := failedReport(strings.Repeat("b: 500 internal error ✗\n", 400))
	rep.Hooks[0].Logs[0].Text = strings.Repeat("a: ok ✓\n", 400)
	for limit := 1000; limit <= 20000; limit += 97 {
		md := rep.Markdown(limit)
		if len(md) > limit || !utf8.ValidString(md) {
			t.Fatalf("limit %d: %d bytes, valid UTF-8 %v", limit, len(md), utf8.ValidString(md))
		}
		if n := strings.Count("\n"+md, "\n```"); n%2 != 0 {
			t.Fatalf("limit %d: %d fence lines, one is left open:\n%s", limit, n, md)
		}
	}
}

func TestMarkdownFencesLogsContainingBackticks(t *testing.T) {
	md := failedReport("```\nnot the end\n").Markdown(markdown.MaxBytes)
	if !strings.Contains(md, "````text\n```\nnot the end\n````") {
		t.Errorf("logs not fenced safely:\n%s", md)
	}
}

func TestKubePodLogsListsJobPodsAndContainers(t *testing.T) {
	client := k8sfake.NewClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "api-test-job-x1", Namespace: ns, Labels: map[string]string{"job-name": "api-test-job"}},
			Spec: corev1.PodSpec{InitContainers: []corev1.Container{{Name: "init"}}, Containers: []corev1.Container{{Name: "test"}}}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}},
	)
	logs := KubePodLogs{Client: client}
	ctx := context.Background()
	pods, err := logs.Pods(ctx, ns, "Job", "api-test-job")
	if err != nil || len(pods) != 1 || pods[0] != "api-test-job-x1" {
		t.Fatalf("pods = %v, %v", pods, err)
	}
	if pods, _ := logs.Pods(ctx, ns, "ConfigMap", "x"); len(pods) != 0 {
		t.Errorf("a ConfigMap has no pods: %v", pods)
	}
	text, err := logs.Logs(ctx, ns, "api-test-job-x1")
	if err != nil || !strings.Contains(text, "==> container init <==\nfake logs") || !strings.Contains(text, "==> container test <==") {
		t.Errorf("logs = %q, %v", text, err)
	}
	if _, err := logs.Logs(ctx, ns, "gone"); err == nil {
		t.Errorf("logs of a deleted pod should fail")
	}
}

func TestChartDependencies(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)
	chartYAML := "apiVersion: v2\nname: api\nversion: 1.2.3\ndependencies:\n  - name: cache\n    version: 0.1.0\n    repository: https://charts.example.com\n"
	if err := os.WriteFile(filepath.Join(dir, "Chart.yaml"), []byte(chartYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Test(context.Background(), cfg, c, input(dir, values))
	if err == nil || !strings.Contains(err.Error(), "cache") || !strings.Contains(err.Error(), "charts/") {
		t.Fatalf("missing dependency: err = %v", err)
	}

	sub := filepath.Join(dir, "charts", "cache")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "Chart.yaml"), []byte("apiVersion: v2\nname: cache\nversion: 0.1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := mustTest(t, cfg, c, input(dir, values)); !rep.Passed() {
		t.Fatalf("with vendored dependency: %+v", rep)
	}
}
