// Package kubetest gives tests a real Kubernetes API server. A test binary
// that uses it starts, on first use, a cluster of its own from the binaries
// in bin/k8s/ (scripts/install-k8s builds them): etcd, kube-apiserver,
// kube-scheduler, kube-controller-manager and kwok, on free loopback ports,
// with its data in a temporary directory. kwok plays the kubelet: no
// container runs, a pod's outcome comes from its annotation (see HookPod)
// and its logs from SetLogs. Each test gets a namespace of its own.
//
// With STRATA_E2E_KUBECONFIG set (STRATA_E2E_CONTEXT optional), the same
// tests run against that cluster instead, whose pods really run.
//
// The test binary's TestMain must be
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
//
// so that the cluster stops when the tests end; its processes also die with
// the test binary when a test panics or times out.
package kubetest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"strata.dev/strata/tooltest"
)

// Environment variables: where the binaries are, and a real cluster to use
// instead of starting one.
const (
	BinEnv        = "STRATA_K8S_BIN"
	KubeconfigEnv = "STRATA_E2E_KUBECONFIG"
	ContextEnv    = "STRATA_E2E_CONTEXT"
)

// ExitCodeAnnotation decides how a pod ends in the test cluster: absent, it
// exits 0; a number, it fails with that exit code; "forever", it runs until
// deleted. Real clusters ignore it (the pod's command decides there).
const ExitCodeAnnotation = "kwok.strata.dev/exit-code"

// Cluster is the cluster of this test binary.
type Cluster struct {
	Kubeconfig string
	Context    string // empty: the kubeconfig's current context
	// Simulated is true for the started cluster, whose pods do not run.
	Simulated bool

	Client  kubernetes.Interface
	dynamic dynamic.Interface
	logDir  string // where SetLogs writes, in the started cluster
}

var (
	mu      sync.Mutex
	shared  *Cluster
	started *controlPlane
	failed  error
)

// Main runs the tests and stops the cluster if one was started.
func Main(m *testing.M) int {
	code := m.Run()
	mu.Lock()
	defer mu.Unlock()
	if started != nil {
		started.stop()
		started = nil
	}
	return code
}

// Namespace returns the cluster, started on first use, and a new namespace
// for the test, deleted when it ends. Without the binaries the test is
// skipped, or fails under STRATA_REQUIRE_TOOLS=1.
func Namespace(t testing.TB) (*Cluster, string) {
	t.Helper()
	c := get(t)
	name := namespaceName(t.Name())
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"strata.dev/test": "true"}}}
	if _, err := c.Client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	t.Cleanup(func() {
		// Not waited for: the namespace controller empties it in the
		// background, and the started cluster goes with the test binary.
		_ = c.Client.CoreV1().Namespaces().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	// Pods are refused until the service account controller has made the
	// namespace's default account.
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		_, err := c.Client.CoreV1().ServiceAccounts(name).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("namespace %s got no default service account: %v", name, err)
	}
	return c, name
}

func get(t testing.TB) *Cluster {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	if shared == nil && failed == nil {
		shared, failed = connectOrStart()
	}
	if failed != nil {
		if missing, ok := failed.(missingError); ok {
			tooltest.Missing(t, "Kubernetes test cluster binaries", missing)
		}
		t.Fatalf("test cluster: %v", failed)
	}
	return shared
}

func connectOrStart() (*Cluster, error) {
	if kubeconfig := os.Getenv(KubeconfigEnv); kubeconfig != "" {
		return connect(kubeconfig, os.Getenv(ContextEnv), false, "")
	}
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cp, err := start(bin)
	if err != nil {
		return nil, err
	}
	started = cp
	return connect(cp.kubeconfig, "", true, cp.logDir)
}

func connect(kubeconfig, context string, simulated bool, logDir string) (*Cluster, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("kubeconfig %s: %w", kubeconfig, err)
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Cluster{Kubeconfig: kubeconfig, Context: context, Simulated: simulated, Client: client, dynamic: dyn, logDir: logDir}, nil
}

var logsResource = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}

// SetLogs makes text the logs of every container of the pod, once it
// exists, in the started cluster. A real cluster's pods print their own, so
// there it does nothing: give the pod a command that prints the same text.
func (c *Cluster) SetLogs(t testing.TB, namespace, pod, text string) {
	t.Helper()
	if !c.Simulated {
		return
	}
	file := filepath.Join(c.logDir, namespace+"_"+pod+".log")
	if err := os.WriteFile(file, criLog(text), 0o644); err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "Logs",
		"metadata":   map[string]any{"name": pod, "namespace": namespace},
		"spec":       map[string]any{"logs": []any{map[string]any{"logsFile": file}}},
	}}
	_, err := c.dynamic.Resource(logsResource).Namespace(namespace).Create(context.Background(), obj, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return // the file, read at each request, has the new text
	}
	if err != nil {
		t.Fatalf("logs of pod %s/%s: %v", namespace, pod, err)
	}
}

// criLog writes text in the container runtime's log format, which kwok
// serves as a kubelet would.
func criLog(text string) []byte {
	var b strings.Builder
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		tag := "P"
		if strings.HasSuffix(line, "\n") {
			tag, line = "F", strings.TrimSuffix(line, "\n")
		}
		fmt.Fprintf(&b, "%s stdout %s %s\n", now, tag, line)
	}
	return []byte(b.String())
}

// HookPod is a Helm hook pod called name for event (test, pre-upgrade, ...)
// that prints output and exits with exitCode ("forever": runs until
// deleted), both in the started cluster (through ExitCodeAnnotation) and in
// a real one (busybox). policy is its helm.sh/hook-delete-policy, if any.
func HookPod(name, event, policy, weight, output, exitCode string) string {
	var ann strings.Builder
	fmt.Fprintf(&ann, "    helm.sh/hook: %s\n    helm.sh/hook-weight: %q\n", event, weight)
	if policy != "" {
		fmt.Fprintf(&ann, "    helm.sh/hook-delete-policy: %s\n", policy)
	}
	script := fmt.Sprintf("printf '%%s\\n' %s; exit %s", shellQuote(output), exitCode)
	switch exitCode {
	case "0":
	case "forever":
		fmt.Fprintf(&ann, "    %s: forever\n", ExitCodeAnnotation)
		script = fmt.Sprintf("printf '%%s\\n' %s; sleep 3600", shellQuote(output))
	default:
		fmt.Fprintf(&ann, "    %s: %q\n", ExitCodeAnnotation, exitCode)
	}
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  annotations:\n" + ann.String() +
		"spec:\n  restartPolicy: Never\n  terminationGracePeriodSeconds: 0\n  containers:\n    - name: hook\n      image: busybox:1.36\n" +
		"      command: [sh, -c, " + fmt.Sprintf("%q", script) + "]\n"
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

var notDNS = regexp.MustCompile(`[^a-z0-9-]+`)

// namespaceName is a DNS label made of the test's name and a unique suffix.
func namespaceName(test string) string {
	name := strings.Trim(notDNS.ReplaceAllString(strings.ToLower(test), "-"), "-")
	suffix := fmt.Sprintf("-%x", time.Now().UnixNano()&0xffffff)
	if max := 63 - len(suffix); len(name) > max {
		name = strings.TrimRight(name[:max], "-")
	}
	return name + suffix
}
