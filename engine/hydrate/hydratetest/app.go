package hydratetest

import "strconv"

// AppRepo returns a fresh copy of a small kustomize repository: a base with a
// configMapGenerator, a component and a dev overlay (deploy/overlays/dev)
// with an image override, a strategic-merge patch and a JSON patch.
func AppRepo() map[string]string {
	return map[string]string{
		"deploy/base/kustomization.yaml": `resources:
- deployment.yaml
- service.yaml
configMapGenerator:
- name: app-config
  literals: [LOG_LEVEL=info]
`,
		"deploy/base/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 1
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
      - name: api
        image: ghcr.io/acme/api:v1
        envFrom:
        - configMapRef: {name: app-config}
      - name: sidecar
        image: busybox:1.36
`,
		"deploy/base/service.yaml": `apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector: {app: api}
  ports:
  - port: 80
`,
		"deploy/components/monitoring/kustomization.yaml": `apiVersion: kustomize.config.k8s.io/v1alpha1
kind: Component
resources:
- monitor.yaml
`,
		"deploy/components/monitoring/monitor.yaml": `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  name: api
spec:
  selector:
    matchLabels: {app: api}
`,
		"deploy/overlays/dev/kustomization.yaml": `namespace: dev
resources:
- ../../base
- namespace.yaml
components:
- ../../components/monitoring
images:
- name: busybox
  newTag: "1.37"
patches:
- path: replicas.yaml
- target: {kind: Service, name: api}
  patch: |-
    - op: replace
      path: /spec/ports/0/port
      value: 8080
`,
		"deploy/overlays/dev/replicas.yaml": Replicas(3),
		"deploy/overlays/dev/namespace.yaml": `apiVersion: v1
kind: Namespace
metadata:
  name: dev
`,
	}
}

// Replicas is the dev overlay's strategic-merge patch scaling the api
// Deployment to n.
func Replicas(n int) string {
	return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: " + strconv.Itoa(n) + "\n"
}
