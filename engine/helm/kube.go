package helm

import (
	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"
)

// Connect returns Helm's action configuration for releases in namespace of
// the cluster k, kept in Secrets as the helm CLI does, and the reader of
// its hook pods' logs.
func Connect(k Kube, namespace string) (*action.Configuration, PodLogs, error) {
	cfg := new(action.Configuration)
	getter := kube.GetConfig(k.Kubeconfig, k.Context, namespace)
	if err := cfg.Init(getter, namespace, "secret", func(string, ...any) {}); err != nil {
		return nil, nil, err
	}
	client, err := cfg.KubernetesClientSet()
	if err != nil {
		return nil, nil, err
	}
	return cfg, KubePodLogs{Client: client}, nil
}
