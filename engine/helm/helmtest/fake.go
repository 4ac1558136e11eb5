package helmtest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
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
)

// FakeCluster is a Kubernetes cluster made of Helm's own fakes, with what
// they lack for test hooks: release storage per namespace (Helm's memory
// driver); hook pods in client-go's fake clientset, created with their hook
// and gone when Helm deletes it; and, scripted by pod name, logs and
// failures. It is also the PodLogs of its runs: a deleted pod has no logs,
// as in a cluster. Its methods are safe for concurrent use.
type FakeCluster struct {
	pods *k8sfake.Clientset // the hook pods that exist now

	mu         sync.Mutex
	mem        map[string]*driver.Memory
	logs       map[string]string
	failCreate map[string]error
	failWatch  map[string]error
	watchDelay time.Duration
	waitErr    error
	updateErr  error
	deleted    []string
}

// NewFakeCluster returns an empty fake cluster.
func NewFakeCluster() *FakeCluster {
	return &FakeCluster{pods: k8sfake.NewClientset(), mem: map[string]*driver.Memory{}, logs: map[string]string{},
		failCreate: map[string]error{}, failWatch: map[string]error{}}
}

// Config is a Helm configuration for namespace of this cluster, with a kube
// client of its own, as each Strata run connects anew; log may be nil.
func (c *FakeCluster) Config(namespace string, log func(format string, v ...any)) *action.Configuration {
	if log == nil {
		log = func(string, ...any) {}
	}
	return &action.Configuration{
		Releases:     c.Releases(namespace),
		KubeClient:   c.kubeClient(namespace),
		Capabilities: chartutil.DefaultCapabilities,
		Log:          log,
	}
}

// Releases is Helm's storage of namespace, as the cluster holds it.
func (c *FakeCluster) Releases(namespace string) *storage.Storage {
	c.mu.Lock()
	defer c.mu.Unlock()
	m, ok := c.mem[namespace]
	if !ok {
		m = driver.NewMemory()
		m.SetNamespace(namespace)
		c.mem[namespace] = m
	}
	return storage.Init(m)
}

// History lists a release's revisions, oldest first.
func (c *FakeCluster) History(namespace, name string) []*release.Release {
	h, _ := c.Releases(namespace).History(name)
	h = slices.Clone(h)
	slices.SortFunc(h, func(a, b *release.Release) int { return a.Version - b.Version })
	return h
}

// SetLogs scripts the logs of the pod called name.
func (c *FakeCluster) SetLogs(pod, text string) { c.set(func() { c.logs[pod] = text }) }

// FailCreate makes creating the hook pod called name fail with err.
func (c *FakeCluster) FailCreate(pod string, err error) { c.set(func() { c.failCreate[pod] = err }) }

// FailWatch makes the watch of the hook pod called name end with err: the
// hook failed, or timed out.
func (c *FakeCluster) FailWatch(pod string, err error) { c.set(func() { c.failWatch[pod] = err }) }

// DelayWatch makes every hook's watch take d.
func (c *FakeCluster) DelayWatch(d time.Duration) { c.set(func() { c.watchDelay = d }) }

// FailWait makes the install's or upgrade's wait for its resources end with
// err.
func (c *FakeCluster) FailWait(err error) { c.set(func() { c.waitErr = err }) }

// FailUpdate makes updating resources (an upgrade, a rollback) fail with err.
func (c *FakeCluster) FailUpdate(err error) { c.set(func() { c.updateErr = err }) }

func (c *FakeCluster) set(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

// PodExists tells whether the pod is in the cluster now.
func (c *FakeCluster) PodExists(namespace, pod string) bool {
	_, err := c.pods.CoreV1().Pods(namespace).Get(context.Background(), pod, metav1.GetOptions{})
	return err == nil
}

// Deleted lists the hook pods Helm deleted, in order.
func (c *FakeCluster) Deleted() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.deleted)
}

// Pods names the pods of a hook object: the object itself for a Pod. The
// fake cluster runs no Jobs, so other kinds have none.
func (c *FakeCluster) Pods(ctx context.Context, namespace, kind, name string) ([]string, error) {
	if kind == "Pod" {
		return []string{name}, nil
	}
	return nil, nil
}

// Logs returns the scripted logs of a pod that exists.
func (c *FakeCluster) Logs(ctx context.Context, namespace, pod string) (string, error) {
	if !c.PodExists(namespace, pod) {
		return "", fmt.Errorf("pod %s/%s is gone", namespace, pod)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.logs[pod], nil
}

// kubeClient is the cluster's kube client for one run in namespace: Helm's
// FailingKubeClient plus the hook pods and scripted failures. Helm builds
// each hook's manifest right before creating, watching and deleting it, so
// the Pod of the last single-object manifest built is the hook at hand.
type kubeClient struct {
	*kubefake.FailingKubeClient
	c  *FakeCluster
	ns string

	mu   sync.Mutex
	hook string // the Pod of the last single-object manifest built, or ""
}

func (c *FakeCluster) kubeClient(namespace string) *kubeClient {
	failing := &kubefake.FailingKubeClient{PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard}}
	return &kubeClient{FailingKubeClient: failing, c: c, ns: namespace}
}

func (k *kubeClient) Build(r io.Reader, validate bool) (kube.ResourceList, error) {
	b, _ := io.ReadAll(r)
	k.mu.Lock()
	k.hook = singlePod(b)
	k.mu.Unlock()
	return k.FailingKubeClient.Build(bytes.NewReader(b), validate)
}

// singlePod is the name of the Pod a manifest holds when it holds one
// object, a Pod; otherwise "".
func singlePod(manifest []byte) string {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	pod, objects := "", 0
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
		objects++
		if doc.Kind == "Pod" {
			pod = doc.Metadata.Name
		}
	}
	if objects != 1 {
		return ""
	}
	return pod
}

func (k *kubeClient) lastHook() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.hook
}

func (k *kubeClient) Create(resources kube.ResourceList) (*kube.Result, error) {
	if name := k.lastHook(); name != "" {
		k.c.mu.Lock()
		err := k.c.failCreate[name]
		k.c.mu.Unlock()
		if err != nil {
			return nil, err
		}
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: k.ns},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "test"}}},
		}
		// A pod left by a hook without a delete policy is replaced.
		pods := k.c.pods.CoreV1().Pods(k.ns)
		_ = pods.Delete(context.Background(), name, metav1.DeleteOptions{})
		if _, err := pods.Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
	}
	return k.FailingKubeClient.Create(resources)
}

func (k *kubeClient) WatchUntilReady(resources kube.ResourceList, timeout time.Duration) error {
	if name := k.lastHook(); name != "" {
		k.c.mu.Lock()
		err, delay := k.c.failWatch[name], k.c.watchDelay
		k.c.mu.Unlock()
		time.Sleep(delay)
		if err != nil {
			return err
		}
	}
	return k.FailingKubeClient.WatchUntilReady(resources, timeout)
}

func (k *kubeClient) Wait(resources kube.ResourceList, timeout time.Duration) error {
	k.c.mu.Lock()
	err := k.c.waitErr
	k.c.mu.Unlock()
	if err != nil {
		return err
	}
	return k.FailingKubeClient.Wait(resources, timeout)
}

func (k *kubeClient) Update(original, target kube.ResourceList, force bool) (*kube.Result, error) {
	k.c.mu.Lock()
	err := k.c.updateErr
	k.c.mu.Unlock()
	if err != nil {
		return &kube.Result{}, err // Helm reads the result even on error
	}
	return k.FailingKubeClient.Update(original, target, force)
}

func (k *kubeClient) Delete(resources kube.ResourceList) (*kube.Result, []error) {
	if name := k.lastHook(); name != "" {
		_ = k.c.pods.CoreV1().Pods(k.ns).Delete(context.Background(), name, metav1.DeleteOptions{})
		k.c.mu.Lock()
		k.c.deleted = append(k.c.deleted, name)
		k.c.mu.Unlock()
	}
	return k.FailingKubeClient.Delete(resources)
}
