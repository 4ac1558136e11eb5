package kubetest

import (
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/yaml"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// A pod that exits 0, one that exits 3 and one that runs forever -> phases
// Succeeded, Failed (exit code 3) and Running on the scheduled node; the
// first two serve the logs set for them through the API server, and the
// deleted one goes.
func TestClusterRunsPodsToTheirOutcome(t *testing.T) {
	c, ns := Namespace(t)
	ctx := context.Background()
	pods := map[string]string{"ok": "0", "bad": "3", "slow": "forever"}
	for name, code := range pods {
		c.SetLogs(t, ns, name, name+": hello\n")
		var pod corev1.Pod
		manifest := HookPod(name, "test", "", "0", name+": hello", code)
		if err := yaml.Unmarshal([]byte(manifest), &pod); err != nil {
			t.Fatalf("%s\n%s", err, manifest)
		}
		if _, err := c.Client.CoreV1().Pods(ns).Create(ctx, &pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]corev1.PodPhase{"ok": corev1.PodSucceeded, "bad": corev1.PodFailed, "slow": corev1.PodRunning}
	for name, phase := range want {
		var p *corev1.Pod
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
			var err error
			p, err = c.Client.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			return err == nil && p.Status.Phase == phase, nil
		})
		if err != nil {
			t.Fatalf("pod %s: phase %s, want %s", name, p.Status.Phase, phase)
		}
		if name == "bad" {
			if s := p.Status.ContainerStatuses; len(s) != 1 || s[0].State.Terminated == nil || s[0].State.Terminated.ExitCode != 3 {
				t.Errorf("pod bad: container statuses %+v", s)
			}
		}
		if name == "slow" {
			continue
		}
		stream, err := c.Client.CoreV1().Pods(ns).GetLogs(name, &corev1.PodLogOptions{}).Stream(ctx)
		if err != nil {
			t.Fatalf("logs of %s: %v", name, err)
		}
		b, _ := io.ReadAll(stream)
		stream.Close()
		if strings.TrimSpace(string(b)) != name+": hello" {
			t.Errorf("logs of %s = %q", name, b)
		}
	}
	if err := c.Client.CoreV1().Pods(ns).Delete(ctx, "slow", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().Pods(ns).Get(ctx, "slow", metav1.GetOptions{})
		return err != nil, nil
	})
	if err != nil {
		t.Error("deleted pod slow is still there")
	}
}

func TestNamespaceName(t *testing.T) {
	for _, tc := range []struct{ test, prefix string }{
		{"TestReleases/rollback", "testreleases-rollback-"},
		{"Test" + strings.Repeat("X", 80), "test" + strings.Repeat("x", 50)},
	} {
		got := namespaceName(tc.test)
		if !strings.HasPrefix(got, tc.prefix) || len(got) > 63 {
			t.Errorf("namespaceName(%q) = %q", tc.test, got)
		}
	}
}
