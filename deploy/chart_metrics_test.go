package deploy

import (
	"fmt"
	"testing"
)

// portsOf lists an object's ports as "name port->target" (a Service) or
// "name port" (a container).
func portsOf(ports any) []string {
	var out []string
	list, _ := ports.([]any)
	for _, p := range list {
		if target := get(p, "targetPort"); target != nil {
			out = append(out, fmt.Sprintf("%v %v->%v", get(p, "name"), get(p, "port"), target))
			continue
		}
		out = append(out, fmt.Sprintf("%v %v", get(p, "name"), get(p, "containerPort")))
	}
	return out
}

// /metrics has a port of its own: the container listens on it
// (STRATA_METRICS_ADDR), the Service exposes it inside the cluster only
// (ClusterIP), and the ingress routes the http port alone. Disabled, the
// server serves no metrics and no port names them.
func TestChartMetricsStayInsideTheCluster(t *testing.T) {
	ingress := map[string]any{"enabled": true, "host": "strata.example.com"}
	for _, tc := range []struct {
		name      string
		metrics   map[string]any
		addr      string
		container string
		service   string
	}{
		{"default", nil, ":9090", "[http 8080 metrics 9090]", "[http 80->http metrics 9090->metrics]"},
		{"another port", map[string]any{"port": 9464}, ":9464", "[http 8080 metrics 9464]", "[http 80->http metrics 9464->metrics]"},
		{"disabled", map[string]any{"enabled": false}, "off", "[http 8080]", "[http 80->http]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := map[string]any{"ingress": ingress}
			if tc.metrics != nil {
				values["metrics"] = tc.metrics
			}
			r := mustRender(t, values)
			if got := r.env(t)["STRATA_METRICS_ADDR"]; got != tc.addr {
				t.Errorf("STRATA_METRICS_ADDR = %q, want %q", got, tc.addr)
			}
			if got := fmt.Sprint(portsOf(get(r.container(t), "ports"))); got != tc.container {
				t.Errorf("container ports %s, want %s", got, tc.container)
			}
			svc := r.objects["Service/strata"]
			if got := fmt.Sprint(portsOf(get(svc, "spec", "ports"))); got != tc.service {
				t.Errorf("Service ports %s, want %s", got, tc.service)
			}
			if got := get(svc, "spec", "type"); got != "ClusterIP" {
				t.Errorf("Service type %v, want ClusterIP: metrics stay inside the cluster", got)
			}
			backend := get(r.objects["Ingress/strata"], "spec", "rules", 0, "http", "paths", 0, "backend", "service", "port", "name")
			if n := len(get(r.objects["Ingress/strata"], "spec", "rules", 0, "http", "paths").([]any)); n != 1 || backend != "http" {
				t.Errorf("the ingress routes %d paths, to port %v; want one, to http", n, backend)
			}
		})
	}
}
