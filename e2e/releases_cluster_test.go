package e2e

import (
	"context"
	"sync"
	"testing"

	"helm.sh/helm/v3/pkg/action"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/helm"
	"strata.dev/strata/engine/helm/helmtest"
	"strata.dev/strata/releases"
)

// Helm's own fakes, handed to the test servers as their releases.Clusters:
// a fake cluster per test, found by the kubeconfig path its server config
// names. Other paths (the real cluster of STRATA_E2E_KUBECONFIG) go to a
// real cluster.
var fakes = &fakeClusters{byKubeconfig: map[string]*helmtest.FakeCluster{}}

type fakeClusters struct {
	mu           sync.Mutex
	byKubeconfig map[string]*helmtest.FakeCluster
}

func (f *fakeClusters) Connect(ctx context.Context, c config.Cluster, namespace string) (*action.Configuration, helm.PodLogs, error) {
	f.mu.Lock()
	fc := f.byKubeconfig[c.Kubeconfig]
	f.mu.Unlock()
	if fc == nil {
		return releases.KubeClusters{}.Connect(ctx, c, namespace)
	}
	return fc.Config(namespace, nil), fc, nil
}

// newFakeCluster makes a fake cluster and the server config entry that
// reaches it, named "ci".
func newFakeCluster(t *testing.T) (*helmtest.FakeCluster, config.Cluster) {
	t.Helper()
	fc := helmtest.NewFakeCluster()
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
