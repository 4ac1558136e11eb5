package deploy

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/lint"
	"helm.sh/helm/v3/pkg/lint/support"

	"strata.dev/strata/config"
)

const chartDir = "chart/strata"

// rendered is a chart rendered with some values: its objects by kind and
// name, and its NOTES.
type rendered struct {
	objects map[string]map[string]any // "Kind/name"
	notes   string
}

func render(t *testing.T, values map[string]any) (*rendered, error) {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{Name: "strata", Namespace: "infra", IsInstall: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	r := &rendered{objects: map[string]map[string]any{}}
	for name, text := range out {
		if strings.HasSuffix(name, "NOTES.txt") {
			r.notes = text
			continue
		}
		dec := yaml.NewDecoder(strings.NewReader(text))
		for {
			var obj map[string]any
			if err := dec.Decode(&obj); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				t.Fatalf("%s: %v\n%s", name, err, text)
			}
			if obj != nil {
				r.objects[obj["kind"].(string)+"/"+get(obj, "metadata", "name").(string)] = obj
			}
		}
	}
	return r, nil
}

func mustRender(t *testing.T, values map[string]any) *rendered {
	t.Helper()
	r, err := render(t, values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return r
}

// get walks maps by key and lists by index (an int).
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func (r *rendered) container(t *testing.T) map[string]any {
	t.Helper()
	c, ok := get(r.objects["StatefulSet/strata"], "spec", "template", "spec", "containers", 0).(map[string]any)
	if !ok {
		t.Fatalf("no StatefulSet container in %v", r.objects)
	}
	return c
}

// env is the container's variables: a value, or "secret NAME/KEY".
func (r *rendered) env(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, e := range get(r.container(t), "env").([]any) {
		name := get(e, "name").(string)
		if ref := get(e, "valueFrom", "secretKeyRef"); ref != nil {
			out[name] = "secret " + get(ref, "name").(string) + "/" + get(ref, "key").(string)
			continue
		}
		out[name], _ = get(e, "value").(string)
	}
	return out
}

func TestChartLints(t *testing.T) {
	for name, values := range map[string]map[string]any{
		"default":  nil,
		"postgres": {"replicas": 3, "databaseURL": "postgres://strata@db/strata", "encryptionKeySecret": map[string]any{"name": "strata-key"}},
		"ingress":  {"ingress": map[string]any{"enabled": true, "host": "strata.example.com", "tls": map[string]any{"secretName": "strata-tls"}}},
	} {
		l := lint.All(chartDir, values, "infra", false)
		for _, m := range l.Messages {
			if m.Severity >= support.WarningSev {
				t.Errorf("%s: lint: %s", name, m)
			}
		}
	}
}

// The default values deploy one replica on SQLite that is ready in setup
// mode (readiness is /readyz, which passes while the setup page is served;
// liveness is /healthz), starts without the App's Secret, can write its
// data volume as the image's non-root user, and tells how to find the
// setup URL.
func TestChartDefaults(t *testing.T) {
	r := mustRender(t, nil)
	sts := r.objects["StatefulSet/strata"]
	if get(sts, "spec", "replicas") != 1 {
		t.Errorf("replicas = %v", get(sts, "spec", "replicas"))
	}
	c := r.container(t)
	for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz", "startupProbe": "/healthz"} {
		if got := get(c, probe, "httpGet", "path"); got != path {
			t.Errorf("%s path = %v, want %s", probe, got, path)
		}
	}
	if get(c, "envFrom", 0, "secretRef", "name") != "strata" || get(c, "envFrom", 0, "secretRef", "optional") != true {
		t.Errorf("the App's Secret must be optional until setup is done: %v", get(c, "envFrom"))
	}
	pod := get(sts, "spec", "template", "spec")
	if get(pod, "securityContext", "fsGroup") != 10001 || get(pod, "securityContext", "runAsUser") != 10001 {
		t.Errorf("pod securityContext = %v, want the image's user and its fsGroup", get(pod, "securityContext"))
	}
	if get(c, "resources", "requests", "memory") == nil || get(c, "resources", "limits", "memory") == nil {
		t.Errorf("resources = %v", get(c, "resources"))
	}
	if got := get(sts, "spec", "volumeClaimTemplates", 0, "spec", "resources", "requests", "storage"); got != "10Gi" {
		t.Errorf("data volume = %v", got)
	}
	env := r.env(t)
	if env["STRATA_DATA_DIR"] != "/data" || env["STRATA_DATABASE_URL"] != "" || env["STRATA_ENCRYPTION_KEY"] != "" {
		t.Errorf("env = %v", env)
	}
	if get(c, "args") != nil {
		t.Errorf("args without a config: %v", get(c, "args"))
	}
	for _, kind := range []string{"Ingress/strata", "ConfigMap/strata-config"} {
		if r.objects[kind] != nil {
			t.Errorf("%s rendered by default", kind)
		}
	}
	if r.objects["Service/strata"] == nil || r.objects["ServiceAccount/strata"] == nil {
		t.Errorf("rendered %v", keys(r.objects))
	}
	for _, want := range []string{"logs strata-0 | grep -o 'http://localhost:8080/setup?token=[0-9a-f]*'", "No public URL"} {
		if !strings.Contains(r.notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, r.notes)
		}
	}
}

// Three replicas on PostgreSQL share the database, its password and the
// plan encryption key, all from Secrets.
func TestChartPostgresWithThreeReplicas(t *testing.T) {
	r := mustRender(t, map[string]any{
		"replicas": 3, "databaseURL": "postgres://strata@db.infra:5432/strata?sslmode=require",
		"databasePasswordSecret": map[string]any{"name": "strata-db"},
		"encryptionKeySecret":    map[string]any{"name": "strata-key"},
	})
	if got := get(r.objects["StatefulSet/strata"], "spec", "replicas"); got != 3 {
		t.Errorf("replicas = %v", got)
	}
	env := r.env(t)
	for k, want := range map[string]string{
		"STRATA_DATABASE_URL":   "postgres://strata@db.infra:5432/strata?sslmode=require",
		"PGPASSWORD":            "secret strata-db/password",
		"STRATA_ENCRYPTION_KEY": "secret strata-key/STRATA_ENCRYPTION_KEY",
	} {
		if env[k] != want {
			t.Errorf("%s = %q, want %q", k, env[k], want)
		}
	}
	if !strings.Contains(r.notes, "With 3 replicas, give every replica the App through the Secret") {
		t.Errorf("NOTES do not say the App must be in the Secret:\n%s", r.notes)
	}
}

// Values that cannot work do not render, and the message says what to do.
func TestChartRefusesWhatCannotWork(t *testing.T) {
	for name, tc := range map[string]struct {
		values map[string]any
		want   string
	}{
		"SQLite with 3 replicas": {map[string]any{"replicas": 3, "encryptionKeySecret": map[string]any{"name": "k"}},
			"replicas is 3, but databaseURL is not PostgreSQL: each replica would have its own SQLite file"},
		"a SQLite URL with 2 replicas": {map[string]any{"replicas": 2, "databaseURL": "sqlite:///data/strata.db", "encryptionKeySecret": map[string]any{"name": "k"}},
			"databaseURL is not PostgreSQL"},
		"PostgreSQL with 3 replicas and no shared key": {map[string]any{"replicas": 3, "databaseURL": "postgres://db/strata"},
			"encryptionKeySecret.name is empty"},
		"an ingress without a host":   {map[string]any{"ingress": map[string]any{"enabled": true}}, "ingress.enabled needs ingress.host"},
		"a database of no known kind": {map[string]any{"databaseURL": "mysql://db/strata"}, "databaseURL must start with"},
	} {
		_, err := render(t, tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: render = %v, want refused with %q", name, err, tc.want)
		}
	}
}

// An ingress with TLS routes the host to the Service, and the host is
// Strata's public URL: the setup page registers the App with it.
func TestChartIngress(t *testing.T) {
	r := mustRender(t, map[string]any{"ingress": map[string]any{
		"enabled": true, "className": "nginx", "host": "strata.example.com",
		"annotations": map[string]any{"cert-manager.io/cluster-issuer": "letsencrypt"},
		"tls":         map[string]any{"secretName": "strata-tls"},
	}})
	ing := r.objects["Ingress/strata"]
	if ing == nil {
		t.Fatalf("no Ingress in %v", keys(r.objects))
	}
	for path, want := range map[string]any{
		"spec.ingressClassName":                                 "nginx",
		"spec.tls.0.secretName":                                 "strata-tls",
		"spec.tls.0.hosts.0":                                    "strata.example.com",
		"spec.rules.0.host":                                     "strata.example.com",
		"spec.rules.0.http.paths.0.backend.service.name":        "strata",
		"spec.rules.0.http.paths.0.backend.service.port.name":   "http",
		"metadata.annotations.cert-manager\\.io/cluster-issuer": "letsencrypt",
	} {
		if got := get(ing, splitPath(path)...); got != want {
			t.Errorf("%s = %v, want %v", path, got, want)
		}
	}
	if got := r.env(t)["STRATA_PUBLIC_URL"]; got != "https://strata.example.com" {
		t.Errorf("STRATA_PUBLIC_URL = %q", got)
	}
	for _, want := range []string{"grep -o 'https://strata.example.com/setup?token=[0-9a-f]*'", "https://strata.example.com/api/github/hook"} {
		if !strings.Contains(r.notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, r.notes)
		}
	}
}

// A config file and kubeconfigs are mounted where the server reads them,
// and the config the chart writes is one the server accepts.
func TestChartConfigAndKubeconfigs(t *testing.T) {
	cfg := map[string]any{
		"terraform": map[string]any{"env": []any{"AWS_REGION"}},
		"clusters":  []any{map[string]any{"name": "ci", "kubeconfig": "/etc/strata/kubeconfigs/ci"}},
		"redact":    []any{"acme-[0-9a-f]{32}"},
	}
	r := mustRender(t, map[string]any{"config": cfg, "kubeconfigsSecret": "strata-kubeconfigs"})
	c := r.container(t)
	if args := get(c, "args"); len(args.([]any)) != 3 || get(args, 0) != "serve" || get(args, 2) != "/etc/strata/config.yaml" {
		t.Errorf("args = %v", args)
	}
	mounts := map[string]any{}
	for _, m := range get(c, "volumeMounts").([]any) {
		mounts[get(m, "name").(string)] = get(m, "mountPath")
	}
	if mounts["config"] != "/etc/strata/config.yaml" || mounts["kubeconfigs"] != "/etc/strata/kubeconfigs" || mounts["data"] != "/data" {
		t.Errorf("mounts = %v", mounts)
	}
	vols := map[string]any{}
	for _, v := range get(r.objects["StatefulSet/strata"], "spec", "template", "spec", "volumes").([]any) {
		vols[get(v, "name").(string)] = v
	}
	if get(vols["config"], "configMap", "name") != "strata-config" || get(vols["kubeconfigs"], "secret", "secretName") != "strata-kubeconfigs" {
		t.Errorf("volumes = %v", vols)
	}
	text, _ := get(r.objects["ConfigMap/strata-config"], "data", "config.yaml").(string)
	file := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, err := config.LoadServer(file, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("the server refuses the chart's config: %v\n%s", err, text)
	}
	if c, ok := loaded.Cluster("ci"); !ok || c.Kubeconfig != "/etc/strata/kubeconfigs/ci" {
		t.Errorf("cluster ci = %+v", c)
	}

	r = mustRender(t, map[string]any{"existingConfigMap": "my-strata"})
	if r.objects["ConfigMap/strata-config"] != nil {
		t.Error("a ConfigMap rendered beside an existing one")
	}
	if got := get(r.objects["StatefulSet/strata"], "spec", "template", "spec", "volumes", 0, "configMap", "name"); got != "my-strata" {
		t.Errorf("config volume = %v", got)
	}
}

// splitPath splits a dotted path; "\." is a dot inside a key, numbers are
// list indexes.
func splitPath(p string) []any {
	var out []any
	for _, part := range strings.Split(strings.ReplaceAll(p, `\.`, "\x00"), ".") {
		part = strings.ReplaceAll(part, "\x00", ".")
		if len(part) == 1 && part[0] >= '0' && part[0] <= '9' {
			out = append(out, int(part[0]-'0'))
			continue
		}
		out = append(out, part)
	}
	return out
}

func keys(m map[string]map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
