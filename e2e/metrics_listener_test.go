package e2e

import (
	"net/http"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
)

// A stranger on the network reaches only the public listener. /metrics
// (the process's memory and goroutines, GitHub calls, webhooks and jobs by
// kind) is not there: it answers 404 and says nothing Prometheus would,
// for a logged-in user too. The metrics listener serves it, and nothing
// else.
func TestMetricsAreNotOnThePublicListener(t *testing.T) {
	e := uiEnv(t)
	public := e.Config.PublicURL
	for name, c := range map[string]*http.Client{"a stranger": browser(t), "a logged-in user": uiLogin(t, e, "alice")} {
		res, body := fetchPage(t, c, public+"/metrics")
		if res.StatusCode != http.StatusNotFound || res.Request.URL.Path != "/metrics" {
			t.Errorf("%s GET %s/metrics: %d at %s, want 404 there", name, public, res.StatusCode, res.Request.URL)
		}
		for _, leak := range []string{"go_goroutines", "process_resident_memory_bytes", "strata_github_requests_total", "# HELP"} {
			if strings.Contains(body, leak) {
				t.Errorf("%s reads %s on the public listener:\n%.300s", name, leak, body)
			}
		}
	}
	metrics := e.Server.MetricsAddr()
	if metrics == "" || metrics == e.Server.Addr() {
		t.Fatalf("metrics listen on %q, the public listener on %q: want a listener of their own", metrics, e.Server.Addr())
	}
	res, body := fetchPage(t, browser(t), "http://"+metrics+"/metrics")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics on the metrics listener: %d", res.StatusCode)
	}
	for _, want := range []string{"go_goroutines", `strata_github_requests_total{method="GET",status="200"}`} {
		if !strings.Contains(body, want) {
			t.Errorf("the metrics listener's /metrics lacks %s", want)
		}
	}
	for _, path := range []string{"/", "/healthz", "/runs/1", "/login", "/api/github/hook"} {
		if res, _ := fetchPage(t, browser(t), "http://"+metrics+path); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s on the metrics listener: %d, want 404: it serves /metrics alone", path, res.StatusCode)
		}
	}
}

// STRATA_METRICS_ADDR=off serves no metrics anywhere, and the server runs.
func TestMetricsOff(t *testing.T) {
	e := apptest.Start(t, apptest.Options{Local: true, Configure: func(cfg *config.Server) { cfg.MetricsAddr = "off" }})
	if addr := e.Server.MetricsAddr(); addr != "" {
		t.Errorf("metrics off, yet they listen on %s", addr)
	}
	if res, _ := fetchPage(t, browser(t), e.Config.PublicURL+"/metrics"); res.StatusCode != http.StatusNotFound {
		t.Errorf("metrics off: the public /metrics answered %d, want 404", res.StatusCode)
	}
}
