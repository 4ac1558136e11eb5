package hydrate

import (
	"slices"
	"testing"

	"sigs.k8s.io/kustomize/kyaml/yaml"
)

func TestFileNamesAreDeterministicAndCollisionFree(t *testing.T) {
	docs := []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: api, namespace: dev}\n",
		"apiVersion: example.com/v1\nkind: Deployment\nmetadata: {name: api, namespace: dev}\n",
		"apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: 'system:reader'}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: A, namespace: dev}\n",
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: dev}\n",
	}
	var nodes []*yaml.RNode
	for _, d := range docs {
		nodes = append(nodes, yaml.MustParse(d))
	}
	files, _, err := layout(nodes)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"clusterrole_system-reader.yaml",
		"configmap_dev_a-2.yaml",
		"configmap_dev_a.yaml",
		"deployment.apps_dev_api.yaml",
		"deployment.example.com_dev_api.yaml",
	}
	if got := sortedKeys(files); !slices.Equal(got, want) {
		t.Fatalf("names = %v, want %v", got, want)
	}

	slices.Reverse(nodes)
	again, _, err := layout(nodes)
	if err != nil {
		t.Fatal(err)
	}
	if Diff(files, again) != "" {
		t.Errorf("names depend on the build's order:\n%s", Diff(files, again))
	}
}
