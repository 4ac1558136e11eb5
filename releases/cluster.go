package releases

import (
	"context"
	"fmt"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/helm"
)

// Clusters connects Helm to a cluster of the server config.
type Clusters interface {
	// Connect returns Helm's action configuration for releases in namespace
	// of the cluster, and the reader of its hook pods' logs.
	Connect(ctx context.Context, c config.Cluster, namespace string) (*action.Configuration, helm.PodLogs, error)
}

// KubeClusters connects with the cluster's kubeconfig file and context, and
// keeps releases in Secrets, as the helm CLI does.
type KubeClusters struct{}

func (KubeClusters) Connect(_ context.Context, c config.Cluster, namespace string) (*action.Configuration, helm.PodLogs, error) {
	cfg := new(action.Configuration)
	getter := kube.GetConfig(c.Kubeconfig, c.Context, namespace)
	if err := cfg.Init(getter, namespace, "secret", func(string, ...any) {}); err != nil {
		return nil, nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	client, err := cfg.KubernetesClientSet()
	if err != nil {
		return nil, nil, fmt.Errorf("cluster %s: %w", c.Name, err)
	}
	return cfg, helm.KubePodLogs{Client: client}, nil
}
