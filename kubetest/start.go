package kubetest

import (
	"context"
	"crypto/tls"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

//go:embed kwok.yaml
var kwokConfig string

// logsCRD is kwok's Logs resource, from kwok v0.8.0's
// kustomize/crd/bases (Apache License 2.0).
//
//go:embed logs-crd.yaml
var logsCRD []byte

// binaries are the programs the control plane runs, all in one directory.
var binaries = []string{"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok"}

// readyWithin bounds the start of each component; the API server is ready
// in about 4 s on an idle machine, much later on a loaded one.
const readyWithin = 3 * time.Minute

// missingError says the binaries are not there: a missing tool, not a
// broken cluster.
type missingError struct{ err error }

func (e missingError) Error() string { return e.err.Error() }

// binDir finds the binaries: STRATA_K8S_BIN, or bin/k8s of the module.
func binDir() (string, error) {
	dir := os.Getenv(BinEnv)
	if dir == "" {
		root, err := moduleRoot()
		if err != nil {
			return "", missingError{err}
		}
		dir = filepath.Join(root, "bin", "k8s")
	}
	for _, b := range binaries {
		if _, err := os.Stat(filepath.Join(dir, b)); err != nil {
			return "", missingError{fmt.Errorf("%s not in %s (scripts/install-k8s builds it; %s names another directory)", b, dir, BinEnv)}
		}
	}
	return dir, nil
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// controlPlane is the started cluster's processes and files.
type controlPlane struct {
	dir        string
	kubeconfig string
	logDir     string
	procs      []*exec.Cmd // in start order
}

// start runs the control plane and waits until it can run pods.
func start(bin string) (cp *controlPlane, err error) {
	dir, err := os.MkdirTemp("", "strata-kube-")
	if err != nil {
		return nil, err
	}
	cp = &controlPlane{dir: dir, logDir: filepath.Join(dir, "pod-logs")}
	defer func() {
		if err != nil {
			cp.stop()
		}
	}()
	if err := os.MkdirAll(cp.logDir, 0o755); err != nil {
		return nil, err
	}
	pki, err := writePKI(dir)
	if err != nil {
		return nil, err
	}
	ports, err := freePorts(6)
	if err != nil {
		return nil, err
	}
	etcdClient, etcdPeer, apiPort, kcmPort, schedPort, kwokPort := ports[0], ports[1], ports[2], ports[3], ports[4], ports[5]
	server := fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	cp.kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(cp.kubeconfig, []byte(kubeconfigFor(server)), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kwok.yaml"), []byte(kwokConfig), 0o644); err != nil {
		return nil, err
	}
	at := func(name string) string { return filepath.Join(dir, name) }

	etcdURL := fmt.Sprintf("http://127.0.0.1:%d", etcdClient)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", etcdPeer)
	if err := cp.run(bin, "etcd", "--name=strata", "--data-dir="+at("etcd"),
		"--listen-client-urls="+etcdURL, "--advertise-client-urls="+etcdURL,
		"--listen-peer-urls="+peerURL, "--initial-advertise-peer-urls="+peerURL,
		"--initial-cluster=strata="+peerURL, "--unsafe-no-fsync", "--log-level=warn"); err != nil {
		return nil, err
	}
	if err := cp.waitHTTP("etcd", etcdURL+"/health", nil); err != nil {
		return nil, err
	}

	if err := cp.run(bin, "kube-apiserver", "--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", apiPort),
		"--cert-dir="+at("apiserver"), "--token-auth-file="+pki.tokens,
		"--authorization-mode=RBAC", "--service-cluster-ip-range=10.96.0.0/16",
		"--service-account-issuer=https://kubernetes.default.svc", "--service-account-key-file="+pki.saPublic,
		"--service-account-signing-key-file="+pki.saPrivate,
		// No real endpoints on loopback: the kubernetes Service would
		// point at 127.0.0.1, which the API server refuses.
		"--endpoint-reconciler-type=none",
		"--kubelet-preferred-address-types=InternalIP", "--allow-privileged=true"); err != nil {
		return nil, err
	}
	if err := cp.waitHTTP("kube-apiserver", server+"/readyz", map[string]string{"Authorization": "Bearer " + adminToken}); err != nil {
		return nil, err
	}
	if err := installLogsCRD(cp.kubeconfig); err != nil {
		return nil, err
	}

	common := []string{"--kubeconfig=" + cp.kubeconfig, "--authentication-kubeconfig=" + cp.kubeconfig,
		"--authorization-kubeconfig=" + cp.kubeconfig, "--bind-address=127.0.0.1", "--leader-elect=false"}
	if err := cp.run(bin, "kube-controller-manager", append(common, fmt.Sprintf("--secure-port=%d", kcmPort),
		"--cert-dir="+at("kcm"), "--service-account-private-key-file="+pki.saPrivate,
		"--root-ca-file="+pki.caCert, "--use-service-account-credentials=false")...); err != nil {
		return nil, err
	}
	if err := cp.run(bin, "kube-scheduler", append(common, fmt.Sprintf("--secure-port=%d", schedPort), "--cert-dir="+at("scheduler"))...); err != nil {
		return nil, err
	}
	if err := cp.run(bin, "kwok", "--config="+at("kwok.yaml"), "--kubeconfig="+cp.kubeconfig,
		"--node-ip=127.0.0.1", fmt.Sprintf("--node-port=%d", kwokPort), fmt.Sprintf("--server-address=127.0.0.1:%d", kwokPort),
		"--tls-cert-file="+pki.kwokCert, "--tls-private-key-file="+pki.kwokKey); err != nil {
		return nil, err
	}
	for name, port := range map[string]int{"kube-controller-manager": kcmPort, "kube-scheduler": schedPort} {
		if err := cp.waitHTTP(name, fmt.Sprintf("https://127.0.0.1:%d/healthz", port), nil); err != nil {
			return nil, err
		}
	}
	if err := cp.waitHTTP("kwok", fmt.Sprintf("https://127.0.0.1:%d/healthz", kwokPort), nil); err != nil {
		return nil, err
	}
	if err := addNode(cp); err != nil {
		return nil, err
	}
	return cp, nil
}

// run starts a component, its output in NAME.log.
func (cp *controlPlane) run(bin, name string, args ...string) error {
	out, err := os.Create(filepath.Join(cp.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(filepath.Join(bin, name), args...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Dir = cp.dir
	cmd.Env = append(os.Environ(), "HOME="+cp.dir) // kwok and the others keep nothing in the user's home
	// Killed with the test binary, whatever ends it: a panic or a -timeout
	// skips every deferred stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		out.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	out.Close()
	cp.procs = append(cp.procs, cmd)
	return nil
}

// stop ends the components, last started first, and removes the data.
func (cp *controlPlane) stop() {
	for i := len(cp.procs) - 1; i >= 0; i-- {
		cmd := cp.procs[i]
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}
	cp.procs = nil
	_ = os.RemoveAll(cp.dir)
}

// exited reports a component that is no longer running, with its log.
func (cp *controlPlane) exited(name string) error {
	for _, cmd := range cp.procs {
		if filepath.Base(cmd.Path) != name {
			continue
		}
		// A process that has exited, reaped here, makes Wait4 return its pid.
		var ws syscall.WaitStatus
		if pid, _ := syscall.Wait4(cmd.Process.Pid, &ws, syscall.WNOHANG, nil); pid == 0 {
			return nil
		}
		return fmt.Errorf("%s exited (%v):\n%s", name, ws, cp.logTail(name))
	}
	return nil
}

func (cp *controlPlane) logTail(name string) string {
	b, _ := os.ReadFile(filepath.Join(cp.dir, name+".log"))
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
}

// waitHTTP polls url until it answers 200, or the component exits.
func (cp *controlPlane) waitHTTP(name, url string, header map[string]string) error {
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, // self-signed serving certificates
	}}
	var last string
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, readyWithin, true, func(ctx context.Context) (bool, error) {
		if err := cp.exited(name); err != nil {
			return false, err
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := client.Do(req)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		body, _ := io.ReadAll(io.LimitReader(res.Body, 4096))
		res.Body.Close()
		last = fmt.Sprintf("%d %s", res.StatusCode, strings.TrimSpace(string(body)))
		return res.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("%s not ready at %s (last answer: %s): %w\n%s", name, url, last, err, cp.logTail(name))
	}
	return nil
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func kubeconfigFor(server string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
  - name: strata-test
    cluster: {server: %q, insecure-skip-tls-verify: true}
users:
  - name: admin
    user: {token: %q}
contexts:
  - name: strata-test
    context: {cluster: strata-test, user: admin}
current-context: strata-test
`, server, adminToken)
}

// installLogsCRD adds kwok's Logs resource, which kwok watches for the
// logs files of pods, and waits until it is served.
func installLogsCRD(kubeconfig string) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	var crd unstructured.Unstructured
	if err := yaml.NewYAMLOrJSONDecoder(strings.NewReader(string(logsCRD)), 4096).Decode(&crd.Object); err != nil {
		return fmt.Errorf("kwok's Logs CRD: %w", err)
	}
	crds := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	ctx := context.Background()
	if _, err := dyn.Resource(crds).Create(ctx, &crd, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("installing kwok's Logs CRD: %w", err)
	}
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, readyWithin, true, func(ctx context.Context) (bool, error) {
		_, err := dyn.Resource(logsResource).Namespace("default").List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
}

// addNode registers the one node, which kwok manages, and waits until it is
// ready and a pod can be scheduled on it.
func addNode(cp *controlPlane) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", cp.kubeconfig)
	if err != nil {
		return err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx := context.Background()
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{
		Name:        "kwok-node-0",
		Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
		Labels:      map[string]string{"kubernetes.io/hostname": "kwok-node-0", "kubernetes.io/os": "linux", "type": "kwok"},
	}}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("adding the node: %w", err)
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, readyWithin, true, func(ctx context.Context) (bool, error) {
		if err := cp.exited("kwok"); err != nil {
			return false, err
		}
		n, err := client.CoreV1().Nodes().Get(ctx, node.Name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = fmt.Sprintf("conditions %v, taints %v", n.Status.Conditions, n.Spec.Taints)
		ready := false
		for _, c := range n.Status.Conditions {
			ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
		}
		// The node controller's not-ready taint goes once it sees the
		// node ready; until then nothing is scheduled.
		return ready && len(n.Spec.Taints) == 0, nil
	})
	if err != nil {
		return fmt.Errorf("node not ready (%s): %w\nkwok:\n%s", last, err, cp.logTail("kwok"))
	}
	return nil
}
