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

	"strata.dev/strata/engine/helm/helmtest"
	"strata.dev/strata/engine/markdown"
)

// TestE2E runs against a real cluster only when STRATA_E2E_KUBECONFIG is
// set (STRATA_E2E_CONTEXT and STRATA_E2E_NAMESPACE optional). It skips
// otherwise, even under STRATA_REQUIRE_TOOLS: a cluster is optional by
// design, and the SDK fakes cover the behaviour; this test checks that the
// log capture also holds where Kubernetes really deletes hook pods.
func TestE2E(t *testing.T) {
	live := helmtest.RealCluster(t)
	namespace := live.Namespace
	cfg := new(action.Configuration)
	getter := kube.GetConfig(live.Kubeconfig, live.Context, namespace)
	if err := cfg.Init(getter, namespace, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	client, err := cfg.KubernetesClientSet()
	if err != nil {
		t.Fatal(err)
	}

	dir := filepath.Join(t.TempDir(), "e2e")
	files := map[string]string{
		"Chart.yaml":                "apiVersion: v2\nname: e2e\nversion: 0.1.0\n",
		"templates/cm.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"templates/tests/pass.yaml": helmtest.HookPod("strata-e2e-pass", `"echo passing-hook-output"`, "hook-succeeded", "0"),
		"templates/tests/fail.yaml": helmtest.HookPod("strata-e2e-fail", `"echo failing-hook-output; exit 1"`, "hook-failed", "1"),
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
	name := "strata-e2e-" + time.Now().Format("150405")
	t.Cleanup(func() { _ = Uninstall(context.Background(), cfg, name) })
	rep, err := Test(ctx, cfg, KubePodLogs{Client: client}, Input{
		Root: filepath.Dir(dir), ChartDir: dir, ReleaseName: name, Namespace: namespace, Timeout: 3 * time.Minute,
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
