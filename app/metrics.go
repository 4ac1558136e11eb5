package app

import (
	"fmt"
	"net"
	"net/http"
	"strconv"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/riverqueue/river/rivertype"
)

// metrics are what /metrics serves, on a listener of its own
// (STRATA_METRICS_ADDR), never the public one: its labels name
// repositories, layers and job kinds, and the Go and process collectors
// describe the host, which is nothing a stranger on the network needs.
type metrics struct {
	registry  *prometheus.Registry
	webhooks  *prometheus.CounterVec
	intake    prometheus.Histogram
	jobs      *prometheus.CounterVec
	apiCalls  *prometheus.CounterVec
	retries   *prometheus.CounterVec
	rateLimit prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		webhooks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_webhooks_total", Help: "Webhook deliveries received, by event and outcome.",
		}, []string{"event", "outcome"}),
		// GitHub waits for the answer (and gives up after 10 s), so the
		// time to answer is the one latency of Strata's that GitHub sees.
		intake: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "strata_webhook_duration_seconds",
			Help:    "Time from a webhook's arrival to Strata's answer (signature check, parsing, the durable enqueue), every delivery.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		jobs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_jobs_total", Help: "Job attempts ended, by kind and state: completed, retryable (failed, will be retried), discarded (failed its last attempt), cancelled.",
		}, []string{"kind", "state"}),
		apiCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_github_requests_total", Help: "GitHub API requests, by method and status.",
		}, []string{"method", "status"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "strata_github_retries_total", Help: "GitHub API requests sent again, by reason: secondary_rate_limit, primary_rate_limit, server_error, network_error.",
		}, []string{"reason"}),
		rateLimit: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "strata_github_rate_limit_remaining", Help: "GitHub API requests left in the current rate-limit window, as last reported.",
		}),
	}
	m.registry.MustRegister(m.webhooks, m.intake, m.jobs, m.apiCalls, m.retries, m.rateLimit,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observeJob(kind string, state rivertype.JobState) {
	m.jobs.WithLabelValues(kind, string(state)).Inc()
}

// githubMiddleware counts API calls (each attempt, under the retries) and
// records the rate limit left. A cached answer's limit is old news.
func (m *metrics) githubMiddleware(next http.RoundTripper) http.RoundTripper {
	return roundTripper(func(r *http.Request) (*http.Response, error) {
		res, err := next.RoundTrip(r)
		status := "error"
		if res != nil {
			status = strconv.Itoa(res.StatusCode)
			v, perr := strconv.ParseFloat(res.Header.Get("X-RateLimit-Remaining"), 64)
			if perr == nil && res.Header.Get("X-From-Cache") == "" {
				m.rateLimit.Set(v)
			}
		}
		m.apiCalls.WithLabelValues(r.Method, status).Inc()
		return res, err
	})
}

var _ githubapp.ClientMiddleware = (*metrics)(nil).githubMiddleware

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// listenMetrics opens the metrics listener, unless metrics are off. It
// listens in New, as the public listener does, so that an address in use
// stops the server at start rather than leaving it without metrics.
func (s *Server) listenMetrics() error {
	if s.cfg.MetricsOff() {
		return nil
	}
	ln, err := net.Listen("tcp", s.cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (STRATA_METRICS_ADDR; off serves no metrics): %w", s.cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}))
	s.metricsLn, s.metricsHTTP = ln, newHTTPServer(mux)
	return nil
}

// serveMetrics serves the metrics listener until shutdown; its end is
// reported on errc, as the public listener's is.
func (s *Server) serveMetrics(errc chan<- error) {
	if s.metricsHTTP != nil {
		go func() { errc <- s.metricsHTTP.Serve(s.metricsLn) }()
	}
}

// MetricsAddr is where /metrics listens, "" when metrics are off.
func (s *Server) MetricsAddr() string {
	if s.metricsLn == nil {
		return ""
	}
	return s.metricsLn.Addr().String()
}

// metricsElsewhere answers /metrics on the public listener: not found, and
// where a scraper set up before the move finds them now.
func metricsElsewhere(w http.ResponseWriter, r *http.Request) {
	http.Error(w, "404 page not found: /metrics is served on the metrics listener (STRATA_METRICS_ADDR), not on this one", http.StatusNotFound)
}
