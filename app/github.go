package app

import (
	"fmt"
	"net/http"
	"time"

	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/ghretry"
	"strata.dev/strata/version"
)

// githubClients builds the clients every GitHub call goes through. Each
// request passes, outermost first: the retries (rate limits waited out,
// transient errors retried), the metrics (one count per attempt), then
// go-githubapp's token transport and cache. Installation tokens are masked
// by the redactor's built-in token patterns.
func (s *Server) githubClients(gcfg githubapp.Config, retry ghretry.Options) (githubapp.ClientCreator, error) {
	// No client timeout: it would count rate-limit waits; each attempt has
	// its own (ghretry's AttemptTimeout).
	clients, err := githubapp.NewDefaultCachingClientCreator(gcfg,
		githubapp.WithClientUserAgent(version.UserAgent()),
		githubapp.WithTransport(namedTransport{http.DefaultTransport}),
		githubapp.WithClientMiddleware(ghretry.Middleware(retry), s.metrics.githubMiddleware),
	)
	if err != nil {
		return nil, fmt.Errorf("GitHub clients: %w", err)
	}
	return clients, nil
}

// githubRetry is how Strata's GitHub clients wait and retry.
func (s *Server) githubRetry() ghretry.Options {
	return ghretry.Options{
		MaxWait:        s.cfg.GitHub.MaxWait,
		AttemptTimeout: 60 * time.Second,
		Now:            s.opts.GitHubNow,
		Sleep:          s.opts.GitHubSleep,
		OnRetry: func(r *http.Request, reason ghretry.Reason, wait time.Duration) {
			s.metrics.retries.WithLabelValues(string(reason)).Inc()
			s.log.Info().Str("method", r.Method).Str("path", r.URL.Path).Str("reason", string(reason)).
				Dur("wait", wait).Msg("GitHub request will be retried")
		},
	}
}

// namedTransport names Strata on the requests that carry no User-Agent of
// their own: the installation token requests, which ghinstallation sends
// below go-githubapp's clients and their User-Agent.
type namedTransport struct{ next http.RoundTripper }

func (t namedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Header.Get("User-Agent") == "" {
		r = r.Clone(r.Context())
		r.Header.Set("User-Agent", version.UserAgent())
	}
	return t.next.RoundTrip(r)
}
