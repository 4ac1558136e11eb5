package app

import (
	"fmt"
	"net/http"
	"time"

	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/ghretry"
	"strata.dev/strata/queue"
	"strata.dev/strata/stateapi"
	"strata.dev/strata/version"
	"strata.dev/strata/web"
	"strata.dev/strata/worker"
)

// newUI builds the web UI on the workers' own deps: it reads the same store
// and asks the same permission table.
func (s *Server) newUI(gcfg githubapp.Config, deps *worker.Deps, q *queue.Queue) (*web.UI, error) {
	// Users' tokens get clients of their own, without go-githubapp's
	// shared response cache (one user's repository list must never answer
	// another's), and a short wait: a person is waiting for the page.
	retry := s.githubRetry()
	retry.MaxWait = 10 * time.Second
	retry.AttemptTimeout = 20 * time.Second
	users := githubapp.NewClientCreator(gcfg.V3APIURL, gcfg.V4APIURL, gcfg.App.IntegrationID, []byte(gcfg.App.PrivateKey),
		githubapp.WithClientUserAgent(version.UserAgent()),
		githubapp.WithTransport(namedTransport{http.DefaultTransport}),
		githubapp.WithClientMiddleware(ghretry.Middleware(retry), s.metrics.githubMiddleware),
	)
	ui, err := web.New(web.Options{Deps: deps, Queue: q, Users: users, Log: s.log, StateRetention: s.cfg.State.Retention})
	if err != nil {
		return nil, fmt.Errorf("web UI: %w", err)
	}
	// The state API asks GitHub who a person's token is as the UI does.
	s.stateAPI.Store(stateapi.New(stateapi.Options{Deps: deps, Users: users, Log: s.log, Retention: s.cfg.State.Retention}))
	if s.cfg.GitHub.ClientID == "" {
		s.log.Warn().Msg("the web UI's GitHub login is off: set STRATA_GITHUB_CLIENT_ID and STRATA_GITHUB_CLIENT_SECRET " +
			"(the App's OAuth client, on its settings page) and the App's callback URL to PUBLIC_URL/api/github/auth")
	}
	return ui, nil
}

// serveUI serves the web UI once the server has an App; before, every page
// points to the setup URL in the log.
func (s *Server) serveUI(w http.ResponseWriter, r *http.Request) {
	if ui := s.ui.Load(); ui != nil {
		ui.ServeHTTP(w, r)
		return
	}
	if st := s.setup.Load(); st != nil && r.URL.Path == "/" {
		st.ServeHTTP(w, r) // a page that says where the setup link is
		return
	}
	http.NotFound(w, r)
}
