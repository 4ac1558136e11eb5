package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	kubefake "helm.sh/helm/v3/pkg/kube/fake"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
	k8sfake "k8s.io/client-go/kubernetes/fake"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/helm"
)

// oneCluster is a fake cluster: Helm's fake kube client and memory storage.
type oneCluster struct {
	mem  *driver.Memory
	seen config.Cluster
}

func (c *oneCluster) Connect(_ context.Context, cl config.Cluster, namespace string) (*action.Configuration, helm.PodLogs, error) {
	c.seen = cl
	c.mem.SetNamespace(namespace)
	return &action.Configuration{
		Releases:     storage.Init(c.mem),
		KubeClient:   &kubefake.FailingKubeClient{PrintingKubeClient: kubefake.PrintingKubeClient{Out: io.Discard}},
		Capabilities: chartutil.DefaultCapabilities,
		Log:          func(string, ...any) {},
	}, helm.KubePodLogs{Client: k8sfake.NewClientset()}, nil
}

// strata run helm-test api --repo DIR --kubeconfig PATH --pr 7 -> installs
// api-pr-7 from the checkout's chart and prints the check's markdown.
func TestRunHelmTest(t *testing.T) {
	root := t.TempDir()
	files := map[string]string{
		".strata.yaml":          "version: 1\nreleases:\n  - name: api\n    chart: charts/api\n    namespace: ci\n    values: [charts/api/ci.yaml]\n    cluster: ci\n",
		"charts/api/Chart.yaml": "apiVersion: v2\nname: api\nversion: 1.0.0\n",
		"charts/api/ci.yaml":    "x: 1\n",
		"charts/api/templates/t.yaml": "apiVersion: v1\nkind: Pod\nmetadata:\n  name: api-test\n  annotations:\n    helm.sh/hook: test\n" +
			"spec:\n  containers:\n    - name: t\n      image: busybox\n",
	}
	for p, text := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fake := &oneCluster{mem: driver.NewMemory()}
	var out bytes.Buffer
	rep, err := runHelmTest(context.Background(), &out, io.Discard, fake, helmTestRun{repoDir: root, release: "api", pr: 7,
		cluster: config.Cluster{Kubeconfig: "/tmp/kubeconfig", Context: "kind"}})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if rep.Release != "api-pr-7" || rep.Revision != 1 || len(rep.Hooks) != 1 || fake.seen.Kubeconfig != "/tmp/kubeconfig" || fake.seen.Context != "kind" {
		t.Errorf("report %s rev %d hooks %+v, cluster %+v", rep.Release, rep.Revision, rep.Hooks, fake.seen)
	}
	for _, want := range []string{"Helm tests passed", "| `api-test` |", "revision **1**"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := runHelmTest(context.Background(), &out, io.Discard, fake, helmTestRun{repoDir: root, release: "web"}); err == nil || !strings.Contains(err.Error(), "no release") {
		t.Errorf("unknown release: %v", err)
	}
}
