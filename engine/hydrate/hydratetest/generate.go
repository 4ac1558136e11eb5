// Package hydratetest writes kustomize-style sources for tests and benchmarks.
package hydratetest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// WriteFiles writes files (repo-relative path to content) under root.
func WriteFiles(root string, files map[string]string) error {
	for p, content := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Large writes under root a base of n resources (Deployments, Services and
// ConfigMaps in equal parts, in files of 100) and an overlay on it with a
// namespace, labels, an images rule, a strategic-merge patch on every
// Deployment, a JSON 6902 patch on every Service and a configMapGenerator.
// It returns the overlay's repo-relative directory.
func Large(root string, n int) (string, error) {
	files := map[string]string{}
	var resources []string
	var doc strings.Builder
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&doc, deployment, i, i, i, i, i%7)
		case 1:
			fmt.Fprintf(&doc, service, i-1, i-1)
		default:
			fmt.Fprintf(&doc, configMap, i, i, i)
		}
		if (i+1)%100 == 0 || i == n-1 {
			name := fmt.Sprintf("resources-%03d.yaml", i/100)
			files["deploy/base/"+name] = doc.String()
			resources = append(resources, name)
			doc.Reset()
		}
	}
	files["deploy/base/kustomization.yaml"] = "resources:\n- " + strings.Join(resources, "\n- ") + "\n"
	files["deploy/overlays/prod/kustomization.yaml"] = overlay
	files["deploy/overlays/prod/deployments.yaml"] = deploymentPatch
	files["deploy/overlays/prod/app.properties"] = "mode=prod\nreplicas=3\n"
	return "deploy/overlays/prod", WriteFiles(root, files)
}

const deployment = `---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: app-%d
  labels: {app: app-%d}
spec:
  replicas: 1
  selector:
    matchLabels: {app: app-%d}
  template:
    metadata:
      labels: {app: app-%d}
    spec:
      containers:
      - name: app
        image: ghcr.io/acme/app:v1.%d
        ports:
        - containerPort: 8080
        env:
        - name: MODE
          value: base
`

const service = `---
apiVersion: v1
kind: Service
metadata:
  name: app-%d
spec:
  selector: {app: app-%d}
  ports:
  - port: 80
    targetPort: 8080
`

const configMap = `---
apiVersion: v1
kind: ConfigMap
metadata:
  name: config-%d
data:
  index: "%d"
  greeting: hello from %d
`

const overlay = `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: prod
labels:
- pairs: {env: prod}
resources:
- ../../base
images:
- name: ghcr.io/acme/app
  newTag: v2.0.0
configMapGenerator:
- name: app-settings
  files: [app.properties]
patches:
- path: deployments.yaml
  target: {kind: Deployment}
- target: {kind: Service}
  patch: |-
    - op: replace
      path: /spec/ports/0/port
      value: 8080
`

const deploymentPatch = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: any
spec:
  replicas: 3
  template:
    spec:
      containers:
      - name: app
        env:
        - name: MODE
          value: prod
`
