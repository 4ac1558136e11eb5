package releases

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/action"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/helm"
)

// Clusters connects Helm to a cluster of the server config.
type Clusters interface {
	// Connect returns Helm's action configuration for releases in namespace
	// of the cluster, and the reader of its hook pods' logs.
	Connect(ctx context.Context, c config.Cluster, namespace string) (*action.Configuration, helm.PodLogs, error)
}

// childTester is a Clusters that runs a release's Helm test in a child
// process of its own, which a timeout kills (KubeClusters); fakes in
// memory cannot cross a process and run it in the server.
type childTester interface {
	TestInChild(ctx context.Context, c config.Cluster, in helm.Input) (*helm.Report, error)
}

// KubeClusters connects with the cluster's kubeconfig file and context, and
// keeps releases in Secrets, as the helm CLI does.
type KubeClusters struct{}

func (KubeClusters) Connect(_ context.Context, c config.Cluster, namespace string) (*action.Configuration, helm.PodLogs, error) {
	cfg, logs, err := helm.Connect(helm.Kube{Kubeconfig: c.Kubeconfig, Context: c.Context}, namespace)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	return cfg, logs, nil
}

// TestInChild runs the test in a child process that connects to the
// cluster itself: the PR's templates never render in the server.
func (KubeClusters) TestInChild(ctx context.Context, c config.Cluster, in helm.Input) (*helm.Report, error) {
	return helm.TestInChild(ctx, helm.Kube{Name: c.Name, Kubeconfig: c.Kubeconfig, Context: c.Context}, in)
}
