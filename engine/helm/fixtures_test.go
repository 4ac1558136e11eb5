package helm

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"

	"strata.dev/strata/engine/helm/helmtest"
)

const ns = "ci"

// testHook is a test hook Pod of a chart fixture.
type testHook struct {
	name     string
	weight   int
	policies string // helm.sh/hook-delete-policy
}

// writeChart writes a chart named api with a ConfigMap and the test hooks,
// and a values file; it returns the chart dir and the values file.
func writeChart(t *testing.T, hooks ...testHook) (string, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "api")
	files := map[string]string{
		"Chart.yaml":               "apiVersion: v2\nname: api\nversion: 1.2.3\nappVersion: \"4.5.6\"\n",
		"values.yaml":              "greeting: hello\nreplicas: 1\n",
		"templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
		"ci-values.yaml":           "greeting: hi from ci\n",
	}
	for _, h := range hooks {
		annotations := fmt.Sprintf("    helm.sh/hook: test\n    helm.sh/hook-weight: %q\n", fmt.Sprint(h.weight))
		if h.policies != "" {
			annotations += fmt.Sprintf("    helm.sh/hook-delete-policy: %s\n", h.policies)
		}
		files["templates/tests/"+h.name+".yaml"] = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + h.name +
			"\n  annotations:\n" + annotations + "spec:\n  restartPolicy: Never\n  containers:\n    - name: test\n      image: busybox\n"
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
	return dir, filepath.Join(dir, "ci-values.yaml")
}

// The fake cluster reads the logs of its hook pods, as KubePodLogs does.
var _ PodLogs = (*helmtest.FakeCluster)(nil)

// newCluster is a fake cluster where the hooks of twoHooks log a line or two.
func newCluster() *helmtest.FakeCluster {
	c := helmtest.NewFakeCluster()
	c.SetLogs("api-test-a", "a: connected\n")
	c.SetLogs("api-test-b", "b: GET /healthz\nb: 500 internal error\n")
	c.SetLogs("api-test-c", "c: ok\n")
	return c
}

func newConfig(t *testing.T, c *helmtest.FakeCluster) *action.Configuration {
	return c.Config(ns, t.Logf)
}

// input tests the chart at chartDir in the tree that holds it.
func input(chartDir, valuesFile string) Input {
	return Input{
		Root:        filepath.Dir(chartDir),
		ChartDir:    chartDir,
		ValuesFiles: []string{valuesFile},
		ReleaseName: "api-pr-7",
		Namespace:   ns,
		Timeout:     time.Minute,
	}
}

func hookByName(t *testing.T, rep *Report, name string) HookResult {
	t.Helper()
	for _, h := range rep.Hooks {
		if h.Name == name {
			return h
		}
	}
	t.Fatalf("no hook %s in report: %+v", name, rep.Hooks)
	return HookResult{}
}

func mustTest(t *testing.T, cfg *action.Configuration, logs PodLogs, in Input) *Report {
	t.Helper()
	rep, err := Test(context.Background(), cfg, logs, in)
	if err != nil {
		t.Fatalf("Test: %v", err)
	}
	return rep
}
