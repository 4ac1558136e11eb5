package helm

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"

	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// TestE2E runs the engine on a real API server (kubetest's, or the cluster
// of STRATA_E2E_KUBECONFIG): the log capture holds where Kubernetes really
// deletes hook pods, and a hook's exit code fails it.
func TestE2E(t *testing.T) {
	c, namespace := kubetest.Namespace(t)
	cfg := new(action.Configuration)
	getter := kube.GetConfig(c.Kubeconfig, c.Context, namespace)
	if err := cfg.Init(getter, namespace, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	c.SetLogs(t, namespace, "strata-e2e-pass", "passing-hook-output\n")
	c.SetLogs(t, namespace, "strata-e2e-fail", "failing-hook-output\n")

	dir := filepath.Join(t.TempDir(), "e2e")
	files := map[string]string{
		"Chart.yaml":                "apiVersion: v2\nname: e2e\nversion: 0.1.0\n",
		"templates/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"templates/tests/pass.yaml": kubetest.HookPod("strata-e2e-pass", "test", "hook-succeeded", "0", "passing-hook-output", "0"),
		"templates/tests/fail.yaml": kubetest.HookPod("strata-e2e-fail", "test", "hook-failed", "1", "failing-hook-output", "1"),
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

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rep, err := Test(ctx, cfg, KubePodLogs{Client: c.Client}, Input{
		Root: filepath.Dir(dir), ChartDir: dir, ReleaseName: "strata-e2e", Namespace: namespace, Timeout: 3 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(rep.Markdown(markdown.MaxBytes))
	pass, fail := hookByName(t, rep, "strata-e2e-pass"), hookByName(t, rep, "strata-e2e-fail")
	if pass.Phase != PhaseSucceeded || len(pass.Logs) == 0 || !strings.Contains(pass.Logs[0].Text, "passing-hook-output") {
		t.Errorf("pass hook = %+v", pass)
	}
	if fail.Phase != PhaseFailed || len(fail.Logs) == 0 || !strings.Contains(fail.Logs[0].Text, "failing-hook-output") {
		t.Errorf("fail hook = %+v", fail)
	}
}
