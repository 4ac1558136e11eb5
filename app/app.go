// Package app wires Strata together: config -> store -> queue -> GitHub
// clients -> handlers -> HTTP server, and runs it until told to stop.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/palantir/go-githubapp/githubapp"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"strata.dev/strata/config"
	"strata.dev/strata/handlers"
	"strata.dev/strata/jobs"
	"strata.dev/strata/layers"
	"strata.dev/strata/queue"
	"strata.dev/strata/redact"
	"strata.dev/strata/releases"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/setup"
	"strata.dev/strata/source"
	"strata.dev/strata/stateapi"
	"strata.dev/strata/store"
	"strata.dev/strata/syncs"
	"strata.dev/strata/version"
	"strata.dev/strata/web"
	"strata.dev/strata/worker"
)

// Server is a running Strata.
type Server struct {
	cfg     *config.Server
	opts    Options
	log     zerolog.Logger
	store   *store.Store
	queue   *queue.Queue
	metrics *metrics
	http    *http.Server
	ln      net.Listener
	// metricsHTTP serves /metrics on metricsLn, apart from the public
	// listener; both nil when metrics are off (app/metrics.go).
	metricsHTTP *http.Server
	metricsLn   net.Listener
	// stateHTTP serves the managed state's backend on stateLn, on
	// loopback; both nil when state is off (app/state.go).
	stateHTTP *http.Server
	stateLn   net.Listener

	webhook atomic.Pointer[http.Handler]
	ui      atomic.Pointer[web.UI]
	// stateAPI serves `strata state pull|push` (app/stateapi.go).
	stateAPI atomic.Pointer[stateapi.API]
	setup    atomic.Pointer[setup.Pages]
	ready    atomic.Bool
	// sandbox is how Terraform runs on this replica (app/sandbox.go).
	sandbox sandbox.Report
}

// Options are knobs for tests and benchmarks.
type Options struct {
	// Listener replaces listening on cfg.Addr.
	Listener net.Listener
	// Heartbeat of running jobs; lost jobs are recovered after 6 beats.
	Heartbeat time.Duration
	// Clusters is how Helm releases reach their clusters; the kubeconfigs of
	// the server config when nil.
	Clusters releases.Clusters
	// Clock replaces time.Now for the capabilities (takeover expiry).
	Clock func() time.Time
	// GitHubNow and GitHubSleep replace the clock GitHub's rate limits are
	// waited out on (ghretry's Now and Sleep): a test moves past a reset
	// instead of waiting for it (githubtest.Clock).
	GitHubNow   func() time.Time
	GitHubSleep func(ctx context.Context, d time.Duration) error
	// ManualPeriodic schedules no periodic job (drift scans and discovery,
	// repins, lock repair, prune): a test enqueues each when it wants it,
	// so that no scan on the wall clock races the ones it runs.
	ManualPeriodic bool
}

// New opens the store, migrates, and listens; Run serves.
func New(ctx context.Context, cfg *config.Server, log zerolog.Logger, opts Options) (*Server, error) {
	if err := cfg.UseStoredCredentials(); err != nil {
		return nil, err
	}
	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	st.LimitLogs(cfg.RunLogLimit)
	if err := st.Migrate(ctx); err != nil {
		st.Close()
		return nil, err
	}
	if err := useKeys(cfg, st, log); err != nil {
		st.Close()
		return nil, err
	}
	s := &Server{cfg: cfg, opts: opts, log: log, store: st, metrics: newMetrics(),
		sandbox: sandbox.Detect(cfg.Terraform.SandboxSettings())}
	s.metrics.registry.MustRegister(newDriftLayers(st))
	ln := opts.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", cfg.Addr); err != nil {
			st.Close()
			return nil, fmt.Errorf("listen on %s (STRATA_ADDR): %w", cfg.Addr, err)
		}
	}
	s.ln = ln
	if err := s.listenMetrics(); err != nil {
		s.Close()
		return nil, err
	}
	if err := s.listenState(); err != nil {
		s.Close()
		return nil, err
	}
	s.http = newHTTPServer(s.routes())
	if cfg.Configured() {
		if err := s.configure(ctx); err != nil {
			s.Close()
			return nil, err
		}
	} else {
		s.setup.Store(setup.New(cfg, log))
	}
	return s, nil
}

// Addr is where the server listens.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Store is the server's store.
func (s *Server) Store() *store.Store { return s.store }

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.HandleFunc("/metrics", metricsElsewhere)
	mux.HandleFunc("GET /runs/{id}", s.runLog)
	mux.HandleFunc("POST "+setup.WebhookPath, s.hook)
	mux.HandleFunc(stateapi.Prefix, s.serveStateAPI)
	// The UI's stylesheet, for the setup pages too: they come before the UI.
	mux.Handle("GET /static/", web.Static())
	// The setup pages exist only while the server has no App.
	mux.HandleFunc("/setup/", s.serveSetup)
	mux.HandleFunc("/setup", s.serveSetup)
	// Everything else is the web UI.
	mux.HandleFunc("/", s.serveUI)
	return mux
}

func (s *Server) serveSetup(w http.ResponseWriter, r *http.Request) {
	st := s.setup.Load()
	if st == nil {
		http.NotFound(w, r)
		return
	}
	st.ServeHTTP(w, r)
}

func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.store.Ping(ctx); err != nil {
		http.Error(w, "database unreachable", http.StatusServiceUnavailable)
		return
	}
	if s.setup.Load() != nil {
		// Ready means serving: without an App, the setup page is what this
		// server serves, and a load balancer must route the operator to it.
		fmt.Fprintf(w, "ready\nversion: %s\nsetup: no GitHub App yet; open the setup URL from the server's log\n", version.String())
		return
	}
	if !s.ready.Load() {
		http.Error(w, "job queue not running", http.StatusServiceUnavailable)
		return
	}
	// Still ready without a sandbox: locks, hydration and Helm tests work,
	// and each plan's check says why it was refused. The table says what
	// keeps each protection of the sandbox here, and what is missing.
	fmt.Fprintf(w, "ready\nversion: %s\n%s", version.String(), s.sandbox.Table())
}

// capabilities is the runtime of every capability, wired explicitly: what
// each owns (commands, workers, scans) is in its package.
func capabilities(deps *worker.Deps, clusters releases.Clusters) (*worker.Runtime, error) {
	return worker.New(deps, layers.New(deps), syncs.New(deps), releases.New(deps, clusters), worker.Housekeeping(deps))
}

// configure builds everything that needs the App's identity.
func (s *Server) configure(ctx context.Context) error {
	cfg, opts := s.cfg, s.opts
	red, err := redact.New(cfg.Redact)
	if err != nil {
		return err
	}
	red.Add(cfg.GitHub.WebhookSecret, cfg.GitHub.ClientSecret)
	red.Add(append([]string{cfg.EncryptionKey}, cfg.EncryptionKeys...)...)
	gcfg := githubapp.Config{V3APIURL: cfg.GitHub.APIURL, V4APIURL: cfg.GitHub.GraphQLURL, WebURL: cfg.GitHub.WebURL}
	gcfg.App.IntegrationID = cfg.GitHub.AppID
	gcfg.App.PrivateKey = cfg.GitHub.PrivateKey
	gcfg.App.WebhookSecret = cfg.GitHub.WebhookSecret
	clients, err := s.githubClients(gcfg, s.githubRetry())
	if err != nil {
		return err
	}
	fetcher, err := source.New(filepath.Join(cfg.DataDir, "sources"), source.Options{
		MaxBytes: cfg.SourceMaxBytes, MaxFileBytes: cfg.SourceMaxFileBytes, MaxFiles: int(cfg.SourceMaxFiles),
		MaxCacheBytes: cfg.SourceCacheMaxBytes,
	})
	if err != nil {
		return err
	}
	deps := &worker.Deps{Config: cfg, Clients: clients, Fetcher: fetcher, Redactor: red, Store: s.store, Logger: s.log, Clock: opts.Clock,
		StateURL: s.StateURL()}
	if deps.BotLogin, err = s.botLogin(ctx, clients); err != nil {
		return err
	}

	rt, err := capabilities(deps, opts.Clusters)
	if err != nil {
		return err
	}
	workers := river.NewWorkers()
	rt.AddWorkers(workers)
	periodic := rt.PeriodicJobs()
	if opts.ManualPeriodic {
		periodic = nil
	}
	q, err := queue.New(s.store, workers, queue.Options{
		Workers:      cfg.Workers,
		RunQueue:     jobs.Runs,
		Log:          s.log,
		Heartbeat:    opts.Heartbeat,
		Logger:       slog.New(slog.NewTextHandler(s.log, &slog.HandlerOptions{Level: slog.LevelWarn})),
		Observe:      s.metrics.observeJob,
		PeriodicJobs: periodic,
	})
	if err != nil {
		return err
	}
	for kind, p := range rt.Policies() {
		q.SetPolicy(kind, p)
	}
	if err := q.Migrate(ctx); err != nil {
		return err
	}
	deps.Queue = q
	s.queue = q

	dispatcher := githubapp.NewEventDispatcher(
		handlers.All(handlers.Base{Queue: q, BotLogin: deps.BotLogin}),
		cfg.GitHub.WebhookSecret,
		githubapp.WithErrorCallback(s.webhookError),
		githubapp.WithResponseCallback(s.webhookResponse),
	)
	ui, err := s.newUI(gcfg, deps, q)
	if err != nil {
		return err
	}
	var h http.Handler = dispatcher
	s.webhook.Store(&h)
	s.ui.Store(ui)
	return nil
}

// botLogin asks GitHub for the App's slug: its comments come from
// "slug[bot]" and must not trigger it.
// GitHub refusing the App's credentials stops the server: every job would
// fail. GitHub out of reach does not; the jobs retry.
func (s *Server) botLogin(ctx context.Context, clients githubapp.ClientCreator) (string, error) {
	gh, err := clients.NewAppClient()
	if err != nil {
		return "", fmt.Errorf("GitHub App client: %w", err)
	}
	app, res, err := gh.Apps.Get(ctx, "")
	if res != nil && res.StatusCode == http.StatusUnauthorized {
		return "", fmt.Errorf("GitHub refused the App's credentials (401 from %s): the private key is not App %d's, or the App ID is wrong; "+
			"download a new key from the App's settings page", s.cfg.GitHub.APIURL, s.cfg.GitHub.AppID)
	}
	if err != nil {
		s.log.Warn().Err(err).Msg("could not read the App's slug; ignoring bot comments by type only")
		return "", nil
	}
	return app.GetSlug() + "[bot]", nil
}

// Run serves until ctx ends, then shuts down gracefully: webhooks stop at
// once, running jobs get the shutdown timeout to finish, queued jobs stay.
func (s *Server) Run(ctx context.Context) error {
	errc := make(chan error, 3)
	go func() { errc <- s.http.Serve(s.ln) }()
	s.serveMetrics(errc)
	s.serveState(errc)
	if st := s.setup.Load(); st != nil {
		// The token in this URL is what opens the setup page: only who reads
		// this log may register the App.
		s.log.Warn().Str("version", version.String()).Msgf("Strata has no GitHub App yet. Open %s to register one.", st.Link(s.publicBase()))
		select {
		case creds := <-st.Done():
			s.cfg.UseCredentials(creds)
			if err := s.configure(ctx); err != nil {
				return err
			}
			s.setup.Store(nil)
		case <-ctx.Done():
			return s.shutdown()
		case err := <-errc:
			return err
		}
	}
	// Jobs must outlive the signal that stops the server: shutdown stops
	// the queue softly, so running jobs finish within the timeout.
	if err := s.queue.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start job queue: %w", err)
	}
	s.ready.Store(true)
	s.logSandbox()
	s.log.Info().Str("version", version.String()).Str("addr", s.Addr()).Str("metrics_addr", s.MetricsAddr()).Msg("Strata is serving")
	select {
	case <-ctx.Done():
		return s.shutdown()
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil
		}
		return err
	}
}

func (s *Server) shutdown() error {
	s.ready.Store(false)
	s.webhook.Store(nil)
	hctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = s.http.Shutdown(hctx)
	if s.metricsHTTP != nil {
		_ = s.metricsHTTP.Shutdown(hctx)
	}
	if s.queue != nil {
		qctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
		defer cancel()
		if err := s.queue.Stop(qctx); err != nil {
			s.log.Warn().Err(err).Msg("jobs still running at the shutdown timeout were cancelled")
		}
	}
	if s.stateHTTP != nil {
		// After the queue: an apply finishing within the shutdown timeout
		// still writes its state.
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = s.stateHTTP.Shutdown(sctx)
	}
	return s.store.Close()
}

// Close releases resources of a server that never ran.
func (s *Server) Close() error {
	if s.ln != nil {
		s.ln.Close()
	}
	if s.metricsLn != nil {
		s.metricsLn.Close()
	}
	if s.stateLn != nil {
		s.stateLn.Close()
	}
	return s.store.Close()
}

func (s *Server) publicBase() string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	host, port, _ := net.SplitHostPort(s.Addr())
	if host == "" || host == "::" || host == "0.0.0.0" {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}
