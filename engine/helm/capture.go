package helm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"time"

	"helm.sh/helm/v3/pkg/kube"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
)

// Why a kube client wrapper: Helm 3.22's ReleaseTesting only offers
// GetPodLogs, which runs after every hook finished and its delete policy
// (hook-succeeded, hook-failed) already removed the pods; the
// helm.sh/hook-output-log-policy annotation copies logs only for charts that
// set it. In the SDK's hook loop (action.Configuration.execHook) every test
// hook is Build, Create, WatchUntilReady, and only then deleted by policy. So
// capturingClient reads the logs of the hook's pods the moment
// WatchUntilReady returns, success, failure or timeout, before Helm can
// delete anything, and remembers how Create and the watch ended.

// hookObject names a Kubernetes object of a hook manifest.
type hookObject struct {
	Kind, Namespace, Name string
}

func (o hookObject) key() string { return o.Kind + "/" + o.Name }

// capture is what happened to one hook object during this run.
type capture struct {
	CreateErr error
	WatchErr  error
	Logs      []PodLog
}

// capturingClient wraps the configured kube client. It is installed into a
// copy of the caller's action.Configuration for the duration of one Test.
type capturingClient struct {
	kube.Interface
	ctx       context.Context
	logs      PodLogs
	namespace string // the release namespace, for objects that name none

	mu        sync.Mutex
	stage     string // what hooks are captured now: "" for none
	lastBuilt []hookObject
	captures  map[string]*capture // by stage and object
}

// Stages of a run whose hooks are captured.
const (
	stageUpgrade = "upgrade" // the install's or upgrade's hooks
	stageTest    = "test"
)

func newCapturingClient(ctx context.Context, inner kube.Interface, logs PodLogs, namespace string) *capturingClient {
	return &capturingClient{Interface: inner, ctx: ctx, logs: logs, namespace: namespace, captures: map[string]*capture{}}
}

// start begins capturing the hooks of stage: the install's or upgrade's
// hooks, then the test hooks. Only hooks are watched until ready, so the
// release's own resources are never captured.
func (c *capturingClient) start(stage string) {
	c.mu.Lock()
	c.stage = stage
	c.mu.Unlock()
}

func (c *capturingClient) stop() { c.start("") }

func (c *capturingClient) captured(stage, kind, name string) (*capture, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cp, ok := c.captures[stage+"/"+kind+"/"+name]
	return cp, ok
}

// Build remembers which objects the manifest names: Helm builds a hook's
// manifest right before creating and watching it, and fake clients return
// resource lists without names.
func (c *capturingClient) Build(r io.Reader, validate bool) (kube.ResourceList, error) {
	manifest, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	objs := parseObjects(manifest, c.namespace)
	c.mu.Lock()
	c.lastBuilt = objs
	c.mu.Unlock()
	return c.Interface.Build(bytes.NewReader(manifest), validate)
}

func (c *capturingClient) Create(resources kube.ResourceList) (*kube.Result, error) {
	res, err := c.Interface.Create(resources)
	if err != nil {
		c.each(resources, func(cp *capture, _ hookObject) { cp.CreateErr = err })
	}
	return res, err
}

func (c *capturingClient) WatchUntilReady(resources kube.ResourceList, timeout time.Duration) error {
	err := c.Interface.WatchUntilReady(resources, timeout)
	c.each(resources, func(cp *capture, o hookObject) {
		cp.WatchErr = err
		cp.Logs = c.readLogs(o)
	})
	return err
}

// each runs fn for every object of resources (or, when the list carries no
// names, of the last built manifest) while capturing.
func (c *capturingClient) each(resources kube.ResourceList, fn func(*capture, hookObject)) {
	c.mu.Lock()
	stage := c.stage
	if stage == "" {
		c.mu.Unlock()
		return
	}
	objs := objectsOf(resources, c.namespace)
	if len(objs) == 0 {
		objs = c.lastBuilt
	}
	c.mu.Unlock()
	for _, o := range objs {
		c.mu.Lock()
		cp, ok := c.captures[stage+"/"+o.key()]
		if !ok {
			cp = &capture{}
			c.captures[stage+"/"+o.key()] = cp
		}
		c.mu.Unlock()
		fn(cp, o)
	}
}

func (c *capturingClient) readLogs(o hookObject) []PodLog {
	if c.logs == nil {
		return nil
	}
	pods, err := c.logs.Pods(c.ctx, o.Namespace, o.Kind, o.Name)
	if err != nil {
		return []PodLog{{Err: err.Error()}}
	}
	out := make([]PodLog, 0, len(pods))
	for _, p := range pods {
		text, err := c.logs.Logs(c.ctx, o.Namespace, p)
		pl := PodLog{Pod: p, Text: text}
		if err != nil {
			pl.Err = err.Error()
		}
		out = append(out, pl)
	}
	return out
}

func objectsOf(resources kube.ResourceList, namespace string) []hookObject {
	var objs []hookObject
	for _, info := range resources {
		if info == nil || info.Name == "" || info.Mapping == nil {
			continue
		}
		ns := info.Namespace
		if ns == "" {
			ns = namespace
		}
		objs = append(objs, hookObject{Kind: info.Mapping.GroupVersionKind.Kind, Namespace: ns, Name: info.Name})
	}
	return objs
}

// parseObjects reads kind, name and namespace of each document of a manifest.
func parseObjects(manifest []byte, namespace string) []hookObject {
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var objs []hookObject
	for {
		var doc struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := dec.Decode(&doc); err != nil {
			return objs
		}
		if doc.Kind == "" || doc.Metadata.Name == "" {
			continue
		}
		ns := doc.Metadata.Namespace
		if ns == "" {
			ns = namespace
		}
		objs = append(objs, hookObject{Kind: doc.Kind, Namespace: ns, Name: doc.Metadata.Name})
	}
}

// isTimeout tells a watch or wait that ran out of time from one that failed.
func isTimeout(err error) bool {
	if err == nil {
		return false
	}
	if wait.Interrupted(err) || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "timed out") || strings.Contains(msg, "context deadline exceeded")
}

// The SDK type-asserts these optional interfaces on the configured client;
// forward them so wrapping changes nothing but the capture.

func (c *capturingClient) WaitForDelete(resources kube.ResourceList, timeout time.Duration) error {
	if ext, ok := c.Interface.(kube.InterfaceExt); ok {
		return ext.WaitForDelete(resources, timeout)
	}
	return nil
}

func (c *capturingClient) UpdateThreeWayMerge(original, target kube.ResourceList, force bool) (*kube.Result, error) {
	if m, ok := c.Interface.(kube.InterfaceThreeWayMerge); ok {
		return m.UpdateThreeWayMerge(original, target, force)
	}
	return c.Interface.Update(original, target, force)
}

func (c *capturingClient) DeleteWithPropagationPolicy(resources kube.ResourceList, policy metav1.DeletionPropagation) (*kube.Result, []error) {
	if d, ok := c.Interface.(kube.InterfaceDeletionPropagation); ok {
		return d.DeleteWithPropagationPolicy(resources, policy)
	}
	return c.Interface.Delete(resources)
}

func (c *capturingClient) GetPodList(namespace string, opts metav1.ListOptions) (*corev1.PodList, error) {
	if l, ok := c.Interface.(kube.InterfaceLogs); ok {
		return l.GetPodList(namespace, opts)
	}
	return &corev1.PodList{}, nil
}

func (c *capturingClient) OutputContainerLogsForPodList(pods *corev1.PodList, namespace string, w func(namespace, pod, container string) io.Writer) error {
	if l, ok := c.Interface.(kube.InterfaceLogs); ok {
		return l.OutputContainerLogsForPodList(pods, namespace, w)
	}
	return nil
}

func (c *capturingClient) Get(resources kube.ResourceList, related bool) (map[string][]runtime.Object, error) {
	if r, ok := c.Interface.(kube.InterfaceResources); ok {
		return r.Get(resources, related)
	}
	return nil, errors.New("kube client cannot get resources")
}

func (c *capturingClient) BuildTable(r io.Reader, validate bool) (kube.ResourceList, error) {
	if t, ok := c.Interface.(kube.InterfaceResources); ok {
		return t.BuildTable(r, validate)
	}
	return c.Build(r, validate)
}

var (
	_ kube.Interface                    = (*capturingClient)(nil)
	_ kube.InterfaceExt                 = (*capturingClient)(nil)
	_ kube.InterfaceThreeWayMerge       = (*capturingClient)(nil)
	_ kube.InterfaceDeletionPropagation = (*capturingClient)(nil)
	_ kube.InterfaceLogs                = (*capturingClient)(nil)
	_ kube.InterfaceResources           = (*capturingClient)(nil)
)
