package hydrate

import (
	"reflect"
	"testing"
)

const validDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
  creationTimestamp: null
  labels: {app: api}
spec:
  replicas: 2
  selector: {matchLabels: {app: api}}
  template:
    metadata: {labels: {app: api}}
    spec:
      containers:
      - name: api
        image: ghcr.io/acme/api:1.0
        ports: [{containerPort: 8080}]
        resources: {limits: {cpu: 500m, memory: 1Gi}, requests: {cpu: 1}}
`

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name        string
		file        string
		invalid     []Invalid
		unvalidated []Unvalidated
		checked     int
	}{
		{name: "a valid Deployment (null timestamp, quantities as strings and numbers)", file: validDeployment, checked: 1},
		{name: "a Service whose targetPort is a name", checked: 1, file: `apiVersion: v1
kind: Service
metadata: {name: api}
spec: {ports: [{port: 80, targetPort: http}], selector: {app: api}}
`},
		{name: "replicas written as a string", checked: 1, file: `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  replicas: "two"
  selector: {matchLabels: {app: api}}
  template: {spec: {containers: [{name: api, image: x}]}}
`, invalid: []Invalid{{File: "f.yaml", APIVersion: "apps/v1", Kind: "Deployment", Name: "api",
			Problems: []string{"/spec/replicas: got string, want integer"}}}},
		{name: "an unknown field in a container", checked: 1, file: `apiVersion: apps/v1
kind: Deployment
metadata: {name: api}
spec:
  selector: {matchLabels: {app: api}}
  template: {spec: {containers: [{name: api, image: x, imagePolicy: Always}]}}
`, invalid: []Invalid{{File: "f.yaml", APIVersion: "apps/v1", Kind: "Deployment", Name: "api",
			Problems: []string{"/spec/template/spec/containers/0: additional properties imagePolicy not allowed"}}}},
		{name: "a ConfigMap", checked: 1, file: `apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {a: "1"}
`},
		{name: "a custom resource is not validated", file: `apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata: {name: api}
spec: {anything: [1, 2]}
`, unvalidated: []Unvalidated{{File: "f.yaml", APIVersion: "monitoring.coreos.com/v1", Kind: "ServiceMonitor", Name: "api"}}},
		{name: "a built-in kind at a version this release does not serve", file: `apiVersion: extensions/v1beta1
kind: Deployment
metadata: {name: old}
`, unvalidated: []Unvalidated{{File: "f.yaml", APIVersion: "extensions/v1beta1", Kind: "Deployment", Name: "old"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := Validate(map[string][]byte{"f.yaml": []byte(tc.file), SyncStateFile: []byte("not: [an object")})
			if err != nil {
				t.Fatal(err)
			}
			if v.Kubernetes != "v1.37.2" || v.Checked != tc.checked {
				t.Errorf("Kubernetes %q, checked %d; want v1.37.2, %d", v.Kubernetes, v.Checked, tc.checked)
			}
			if !reflect.DeepEqual(v.Invalid, tc.invalid) {
				t.Errorf("invalid:\n got %#v\nwant %#v", v.Invalid, tc.invalid)
			}
			if !reflect.DeepEqual(v.Unvalidated, tc.unvalidated) {
				t.Errorf("unvalidated:\n got %#v\nwant %#v", v.Unvalidated, tc.unvalidated)
			}
		})
	}
}

// TestValidateBoundsProblems: an object with many problems reports the
// first five and how many more.
func TestValidateBoundsProblems(t *testing.T) {
	v, err := Validate(map[string][]byte{"cm.yaml": []byte(`apiVersion: v1
kind: ConfigMap
metadata: {name: x}
data: {a: 1, b: 2, c: 3, d: 4, e: 5, f: 6, g: 7}
`)})
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Invalid) != 1 || len(v.Invalid[0].Problems) != 6 || v.Invalid[0].Problems[5] != "… and 2 more" {
		t.Fatalf("got %#v", v.Invalid)
	}
}
