// Package apptest runs a real Strata server against the fake GitHub for
// end-to-end tests: webhooks go into its HTTP server, signed as GitHub
// signs them, and every request it makes is checked against GitHub's API
// description.
package apptest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"strata.dev/strata/app"
	"strata.dev/strata/config"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/queue"
	"strata.dev/strata/releases"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// WebhookSecret is the App's webhook secret in tests.
const WebhookSecret = "apptest-webhook-secret"

// Options shape a test server.
type Options struct {
	// Dialect of a fresh database; ignored when DatabaseURL is set.
	Dialect store.Dialect
	// DatabaseURL shares a database between servers (replicas, restarts).
	DatabaseURL string
	// GitHub shares a fake between servers; a new one when nil.
	GitHub *githubtest.Server
	// DataDir shares a data dir; a temp dir when empty.
	DataDir string
	Workers int
	// Configure changes the server config before start.
	Configure func(*config.Server)
	// Clusters reach the Helm releases' clusters (fakes in tests).
	Clusters releases.Clusters
	// Clock replaces time.Now for the capabilities.
	Clock func() time.Time
	// Local makes the server's public URL its own address, as a browser
	// or an HTTP client on this machine reaches it (web UI tests: login
	// redirects and cookies go to the public URL).
	Local bool
	// Heartbeat of running jobs; a second when zero. A run that cannot
	// renew its lease for three beats cancels itself, and a busy machine
	// (CI beside other tests) can hold up a renewal for a few hundred
	// milliseconds: at 100 ms, live runs were taken for lost.
	Heartbeat time.Duration
	// GitHubClock, when set, is the clock of the fake's rate limits and the
	// one Strata waits them out on: a wait moves it instead of taking time.
	GitHubClock *githubtest.Clock
	// ManualPeriodic schedules none of the server's periodic jobs: the test
	// enqueues a drift scan or a discovery when it wants one, and no scan
	// on the wall clock comes between.
	ManualPeriodic bool
}

// Env is a running Strata with its fake GitHub and one repository.
type Env struct {
	t       testing.TB
	GitHub  *githubtest.Server
	Repo    *githubtest.Repo
	Server  *app.Server
	Config  *config.Server
	HookURL string
	stop    context.CancelFunc
	done    chan error
	log     *serverLog
}

// Start runs a Strata server for the test; it stops at cleanup.
func Start(t testing.TB, opts Options) *Env {
	t.Helper()
	gh := opts.GitHub
	if gh == nil {
		gh = githubtest.NewServer(t)
	}
	repo := gh.Repo("acme", "infra")
	if repo == nil {
		repo = gh.AddRepo("acme", "infra")
	}
	if opts.Dialect == "" {
		opts.Dialect = store.SQLite
	}
	if opts.DatabaseURL == "" {
		opts.DatabaseURL = storetest.URL(t, opts.Dialect)
	}
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.Workers == 0 {
		opts.Workers = 4
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	clientID, clientSecret := gh.OAuthClient()
	cfg := &config.Server{
		DatabaseURL:  opts.DatabaseURL,
		DataDir:      opts.DataDir,
		PublicURL:    "https://strata.example.test",
		MetricsAddr:  "127.0.0.1:0", // a port of its own: test servers run side by side
		State:        config.State{Addr: "127.0.0.1:0"},
		TerraformBin: TerraformBin(t),
		Workers:      opts.Workers,
		GitHub: config.GitHub{
			AppID:         gh.AppID(),
			PrivateKey:    string(gh.PrivateKeyPEM()),
			WebhookSecret: WebhookSecret,
			APIURL:        gh.APIURL(),
			GraphQLURL:    gh.GraphQLURL(),
			WebURL:        gh.WebURL(),
			ClientID:      clientID,
			ClientSecret:  clientSecret,
		},
		ShutdownTimeout: 30 * time.Second,
	}
	if opts.Local {
		cfg.PublicURL = "http://" + ln.Addr().String()
	}
	if opts.Configure != nil {
		opts.Configure(cfg)
	}
	env := map[string]string{}
	full, err := config.LoadServerFrom(cfg, func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	serverLog := newServerLog(zerolog.NewTestWriter(t))
	log := zerolog.New(serverLog).Level(zerolog.DebugLevel)
	if opts.Heartbeat == 0 {
		opts.Heartbeat = time.Second
	}
	appOpts := app.Options{Listener: ln, Heartbeat: opts.Heartbeat,
		Clusters: opts.Clusters, Clock: opts.Clock, ManualPeriodic: opts.ManualPeriodic}
	if c := opts.GitHubClock; c != nil {
		gh.SetClock(c.Now)
		appOpts.GitHubNow, appOpts.GitHubSleep = c.Now, c.Sleep
	}
	srv, err := app.New(ctx, full, log, appOpts)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	e := &Env{t: t, GitHub: gh, Repo: repo, Server: srv, Config: full,
		HookURL: "http://" + srv.Addr() + "/api/github/hook", stop: cancel, done: make(chan error, 1), log: serverLog}
	go func() { e.done <- srv.Run(ctx) }()
	e.waitReady()
	t.Cleanup(e.Stop)
	return e
}

func (e *Env) waitReady() {
	e.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get("http://" + e.Server.Addr() + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.t.Fatal("Strata did not become ready")
}

// Stop shuts the server down gracefully; calling it twice is fine.
func (e *Env) Stop() {
	if e.stop == nil {
		return
	}
	e.stop()
	e.stop = nil
	select {
	case err := <-e.done:
		if err != nil {
			e.t.Errorf("server stopped with: %v", err)
		}
	case <-time.After(60 * time.Second):
		e.t.Error("server did not stop within 60s")
	}
}

// Deliver sends a webhook with a fresh delivery id and returns the answer.
func (e *Env) Deliver(payload any, event string) *http.Response {
	e.t.Helper()
	return e.DeliverID(NewDeliveryID(), payload, event)
}

// DeliverID sends a webhook with the given delivery id (for redeliveries).
func (e *Env) DeliverID(id string, payload any, event string) *http.Response {
	e.t.Helper()
	res := githubtest.Deliver(e.t, e.HookURL, WebhookSecret, event, id, payload)
	if res.StatusCode/100 != 2 {
		e.t.Fatalf("webhook %s answered %d, want 2xx", event, res.StatusCode)
	}
	return res
}

// WaitFor polls cond until it holds, failing the test after timeout.
func (e *Env) WaitFor(timeout time.Duration, cond func() bool) {
	e.t.Helper()
	e.GitHub.WaitFor(e.t, timeout, cond)
}

// WaitIdle waits until the server's queue is at rest: every job that the
// webhooks so far started, and every job those started, has finished. It is
// the barrier a test waits on before asserting that nothing more happened.
func (e *Env) WaitIdle(timeout time.Duration) {
	e.t.Helper()
	WaitIdle(e.t, e.Server.Store(), timeout)
}

// WaitIdle waits until the queue in st is at rest (see Env.WaitIdle); for
// tests whose servers are real processes sharing st's database.
func WaitIdle(t testing.TB, st *store.Store, timeout time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		n, err := queue.Pending(ctx, st)
		if err == nil && n == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the queue did not come to rest within %s: %d jobs pending (%v)", timeout, n, err)
		case <-tick.C:
		}
	}
}

// NewDeliveryID returns a GitHub-style delivery id.
func NewDeliveryID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// TerraformBin is the Terraform the tests use: $STRATA_TERRAFORM_BIN, else
// the repo's bin/terraform (v1.5.7, installed by the test command).
func TerraformBin(t testing.TB) string {
	if b := os.Getenv("STRATA_TERRAFORM_BIN"); b != "" {
		return b
	}
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "bin", "terraform")
}
