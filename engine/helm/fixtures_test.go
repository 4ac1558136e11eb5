package helm

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
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

// cluster is Helm's FailingKubeClient plus what its printing client lacks
// for hooks: hook Pods appear in a client-go fake clientset when created and
// vanish when deleted, and single hooks can fail to be created or to finish.
type cluster struct {
	*kubefake.FailingKubeClient
	pods *k8sfake.Clientset

	mu         sync.Mutex
	lastBuilt  string // kind/name of the last single-object manifest built
	failCreate map[string]error
	failWatch  map[string]error
	waitErr    error // of Wait only, the upgrade's wait for resources
	deleted    []string
}

func (c *cluster) Wait(resources kube.ResourceList, timeout time.Duration) error {
	if c.waitErr != nil {
		return c.waitErr
	}
	return c.FailingKubeClient.Wait(resources, timeout)
}

func newCluster() *cluster {
	return &cluster{
		FailingKubeClient: &kubefake.FailingKubeClient{PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard}},
		pods:              k8sfake.NewClientset(),
		failCreate:        map[string]error{},
		failWatch:         map[string]error{},
	}
}

func (c *cluster) Build(r io.Reader, validate bool) (kube.ResourceList, error) {
	b, _ := io.ReadAll(r)
	objs := parseObjects(b, ns)
	c.mu.Lock()
	c.lastBuilt = ""
	if len(objs) == 1 {
		c.lastBuilt = objs[0].key()
	}
	c.mu.Unlock()
	return c.FailingKubeClient.Build(bytes.NewReader(b), validate)
}

func (c *cluster) last() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastBuilt
}

func (c *cluster) Create(resources kube.ResourceList) (*kube.Result, error) {
	key := c.last()
	if err := c.failCreate[strings.TrimPrefix(key, "Pod/")]; err != nil {
		return nil, err
	}
	if name, ok := strings.CutPrefix(key, "Pod/"); ok {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "test"}}},
		}
		if _, err := c.pods.CoreV1().Pods(ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	return c.FailingKubeClient.Create(resources)
}

func (c *cluster) WatchUntilReady(resources kube.ResourceList, timeout time.Duration) error {
	if err := c.failWatch[strings.TrimPrefix(c.last(), "Pod/")]; err != nil {
		return err
	}
	return c.FailingKubeClient.WatchUntilReady(resources, timeout)
}

func (c *cluster) Delete(resources kube.ResourceList) (*kube.Result, []error) {
	if name, ok := strings.CutPrefix(c.last(), "Pod/"); ok {
		_ = c.pods.CoreV1().Pods(ns).Delete(context.Background(), name, metav1.DeleteOptions{})
		c.mu.Lock()
		c.deleted = append(c.deleted, name)
		c.mu.Unlock()
	}
	return c.FailingKubeClient.Delete(resources)
}

func (c *cluster) podExists(name string) bool {
	_, err := c.pods.CoreV1().Pods(ns).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

// scriptedLogs is KubePodLogs over the fake clientset (so a deleted pod has
// no logs, as in a cluster) with a text per pod instead of "fake logs".
type scriptedLogs struct {
	KubePodLogs
	text map[string]string
}

func (s scriptedLogs) Logs(ctx context.Context, namespace, pod string) (string, error) {
	if _, err := s.KubePodLogs.Logs(ctx, namespace, pod); err != nil {
		return "", err
	}
	return s.text[pod], nil
}

func newConfig(t *testing.T, c *cluster) *action.Configuration {
	t.Helper()
	mem := driver.NewMemory()
	mem.SetNamespace(ns)
	return &action.Configuration{
		Releases:     storage.Init(mem),
		KubeClient:   c,
		Capabilities: chartutil.DefaultCapabilities,
		Log:          t.Logf,
	}
}

func input(chartDir, valuesFile string) Input {
	return Input{
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
