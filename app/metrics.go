package app

import (
	"net/http"
	"strconv"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/riverqueue/river/rivertype"
)

// metrics are what /metrics serves.
type metrics struct {
	registry  *prometheus.Registry
	webhooks  *prometheus.CounterVec
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
	m.registry.MustRegister(m.webhooks, m.jobs, m.apiCalls, m.retries, m.rateLimit,
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
