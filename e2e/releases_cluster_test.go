package e2e

import (
	"bytes"
	"context"
	"io"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/kube"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/helm"
	"strata.dev/strata/worker"
)

// Helm's own fakes behind worker.Clusters: a fake cluster per test, found by
// the kubeconfig path its server config names. Other paths (the real
// cluster of STRATA_E2E_KUBECONFIG) go to a real cluster.
var (
	fakes        = &fakeClusters{byKubeconfig: map[string]*fakeCluster{}}
	installFakes sync.Once
)

type fakeClusters struct {
	mu           sync.Mutex
	byKubeconfig map[string]*fakeCluster
}

func (f *fakeClusters) Connect(ctx context.Context, c config.Cluster, namespace string) (*action.Configuration, helm.PodLogs, error) {
	f.mu.Lock()
	fc := f.byKubeconfig[c.Kubeconfig]
	f.mu.Unlock()
	if fc == nil {
		return worker.KubeClusters{}.Connect(ctx, c, namespace)
	}
	cfg := &action.Configuration{
		Releases:     storage.Init(fc.storage(namespace)),
		KubeClient:   &fakeKube{FailingKubeClient: &kubefake.FailingKubeClient{PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard}}, c: fc, ns: namespace},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}
	return cfg, fakeLogs{KubePodLogs: helm.KubePodLogs{Client: fc.pods}, c: fc}, nil
}

// fakeCluster is the state of one fake cluster: release storage per
// namespace, hook pods in client-go's fake clientset (created with the hook,
// gone when Helm deletes it), scripted logs and failures by pod name.
type fakeCluster struct {
	pods *k8sfake.Clientset

	mu         sync.Mutex
	mem        map[string]*driver.Memory
	logs       map[string]string
	failCreate map[string]error
	failWatch  map[string]error
	watchDelay time.Duration
	waitErr    error // of the install's or upgrade's wait for resources
	deleted    []string
}

// newFakeCluster makes a fake cluster and the server config entry that
// reaches it, named "ci".
func newFakeCluster(t *testing.T) (*fakeCluster, config.Cluster) {
	t.Helper()
	installFakes.Do(func() { worker.Clusters = fakes })
	fc := &fakeCluster{pods: k8sfake.NewClientset(), mem: map[string]*driver.Memory{}, logs: map[string]string{},
		failCreate: map[string]error{}, failWatch: map[string]error{}}
	kubeconfig := "fake-kubeconfig://" + apptest.NewDeliveryID()
	fakes.mu.Lock()
	fakes.byKubeconfig[kubeconfig] = fc
	fakes.mu.Unlock()
	t.Cleanup(func() {
		fakes.mu.Lock()
		delete(fakes.byKubeconfig, kubeconfig)
		fakes.mu.Unlock()
	})
	return fc, config.Cluster{Name: "ci", Kubeconfig: kubeconfig}
}

func (c *fakeCluster) storage(namespace string) *driver.Memory {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.mem[namespace]
	if !ok {
		m = driver.NewMemory()
		m.SetNamespace(namespace)
		c.mem[namespace] = m
	}
	return m
}

// releases is Helm's storage of a namespace, as the cluster holds it.
func (c *fakeCluster) releases(namespace string) *storage.Storage {
	return storage.Init(c.storage(namespace))
}

// history lists a release's revisions with their status, oldest first.
func (c *fakeCluster) history(namespace, name string) []*release.Release {
	h, _ := c.releases(namespace).History(name)
	out := append([]*release.Release(nil), h...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Version < out[i].Version {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func (c *fakeCluster) set(f func(c *fakeCluster)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(c)
}

func (c *fakeCluster) podExists(namespace, name string) bool {
	_, err := c.pods.CoreV1().Pods(namespace).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
}

// fakeKube is Helm's FailingKubeClient for one run, plus what its printing
// client lacks for hooks: Helm builds each hook's manifest right before
// creating, watching and deleting it, so the last built Pod is the hook.
type fakeKube struct {
	*kubefake.FailingKubeClient
	c  *fakeCluster
	ns string

	mu        sync.Mutex
	lastBuilt string // the Pod of the last single-Pod manifest built
}

func (k *fakeKube) Build(r io.Reader, validate bool) (kube.ResourceList, error) {
	b, _ := io.ReadAll(r)
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(b), 4096)
	var pods []string
	docs := 0
	for {
		var doc struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
		}
		if err := dec.Decode(&doc); err != nil {
			break
		}
		if doc.Kind == "" {
			continue
		}
		docs++
		if doc.Kind == "Pod" {
			pods = append(pods, doc.Metadata.Name)
		}
	}
	k.mu.Lock()
	k.lastBuilt = ""
	if docs == 1 && len(pods) == 1 {
		k.lastBuilt = pods[0]
	}
	k.mu.Unlock()
	return k.FailingKubeClient.Build(bytes.NewReader(b), validate)
}

func (k *fakeKube) hook() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.lastBuilt
}

func (k *fakeKube) Create(resources kube.ResourceList) (*kube.Result, error) {
	name := k.hook()
	k.c.mu.Lock()
	err := k.c.failCreate[name]
	k.c.mu.Unlock()
	if name != "" && err != nil {
		return nil, err
	}
	if name != "" {
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "test"}}},
		}
		// A pod left by a hook without a delete policy is replaced.
		_ = k.c.pods.CoreV1().Pods(k.ns).Delete(context.Background(), name, metav1.DeleteOptions{})
		if _, err := k.c.pods.CoreV1().Pods(k.ns).Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	return k.FailingKubeClient.Create(resources)
}

func (k *fakeKube) WatchUntilReady(resources kube.ResourceList, timeout time.Duration) error {
	name := k.hook()
	k.c.mu.Lock()
	err, delay := k.c.failWatch[name], k.c.watchDelay
	k.c.mu.Unlock()
	if name != "" {
		time.Sleep(delay)
	}
	if name != "" && err != nil {
		return err
	}
	return k.FailingKubeClient.WatchUntilReady(resources, timeout)
}

func (k *fakeKube) Wait(resources kube.ResourceList, timeout time.Duration) error {
	k.c.mu.Lock()
	err := k.c.waitErr
	k.c.mu.Unlock()
	if err != nil {
		return err
	}
	return k.FailingKubeClient.Wait(resources, timeout)
}

func (k *fakeKube) Delete(resources kube.ResourceList) (*kube.Result, []error) {
	if name := k.hook(); name != "" {
		_ = k.c.pods.CoreV1().Pods(k.ns).Delete(context.Background(), name, metav1.DeleteOptions{})
		k.c.mu.Lock()
		k.c.deleted = append(k.c.deleted, name)
		k.c.mu.Unlock()
	}
	return k.FailingKubeClient.Delete(resources)
}

// fakeLogs reads pods through the fake clientset, so a pod deleted by its
// hook's policy has no logs, as in a cluster; the text is scripted per pod.
type fakeLogs struct {
	helm.KubePodLogs
	c *fakeCluster
}

func (l fakeLogs) Logs(ctx context.Context, namespace, pod string) (string, error) {
	if _, err := l.KubePodLogs.Logs(ctx, namespace, pod); err != nil {
		return "", err
	}
	l.c.mu.Lock()
	defer l.c.mu.Unlock()
	return l.c.logs[pod], nil
}
