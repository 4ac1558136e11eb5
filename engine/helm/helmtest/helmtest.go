// Package helmtest holds what Strata's Helm tests share: a fake cluster made
// of Helm's and client-go's fakes (FakeCluster), for the engine's tests and
// the end-to-end scenarios alike; and, for the optional real-cluster tests,
// the cluster they are pointed at and the test hooks they install.
package helmtest

import (
	"os"
	"testing"
)

// Cluster is the real cluster named by STRATA_E2E_KUBECONFIG,
// STRATA_E2E_CONTEXT (optional) and STRATA_E2E_NAMESPACE (default "default").
type Cluster struct {
	Kubeconfig, Context, Namespace string
}

// RealCluster returns the real cluster, or skips the test when
// STRATA_E2E_KUBECONFIG is not set, even under STRATA_REQUIRE_TOOLS: a
// cluster is optional by design.
func RealCluster(t testing.TB) Cluster {
	t.Helper()
	kubeconfig := os.Getenv("STRATA_E2E_KUBECONFIG")
	if kubeconfig == "" {
		t.Skip("STRATA_E2E_KUBECONFIG not set; the real-cluster test is optional")
	}
	namespace := os.Getenv("STRATA_E2E_NAMESPACE")
	if namespace == "" {
		namespace = "default"
	}
	return Cluster{Kubeconfig: kubeconfig, Context: os.Getenv("STRATA_E2E_CONTEXT"), Namespace: namespace}
}

// HookPod is a Helm test hook: a busybox pod called name that runs cmd (a
// YAML string), with the given hook-delete-policy and hook-weight.
func HookPod(name, cmd, policy, weight string) string {
	return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  annotations:\n    helm.sh/hook: test\n" +
		"    helm.sh/hook-weight: \"" + weight + "\"\n    helm.sh/hook-delete-policy: " + policy + "\nspec:\n  restartPolicy: Never\n" +
		"  containers:\n    - name: test\n      image: busybox:1.36\n      command: [sh, -c, " + cmd + "]\n"
}
