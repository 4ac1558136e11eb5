package e2e

import (
	"context"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"strata.dev/strata/app"
	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
	"strata.dev/strata/version"
)

// Strata names itself to GitHub with its version on every request (GitHub
// asks every client for a User-Agent, and its support reads them), and
// /readyz says which version answers.
func TestGitHubSeesStrataAndItsVersion(t *testing.T) {
	env := apptest.Start(t, apptest.Options{Dialect: store.SQLite})
	pr := openPR(env)
	p, ev := env.Repo.IssueCommentEvent(pr.Number, "alice", "/help")
	env.Deliver(p, ev)
	env.WaitFor(20*time.Second, func() bool { return len(comments(env.Repo, pr.Number, env.GitHub.BotLogin())) > 0 })
	env.WaitIdle(20 * time.Second)

	// go-githubapp's clients add what they act as ("Strata/v1.2.3
	// (installation: 42)"); the installation token requests come bare.
	want := "Strata/" + version.String()
	reqs := env.GitHub.Requests()
	if len(reqs) == 0 {
		t.Fatal("the fake GitHub saw no request")
	}
	for _, r := range reqs {
		if r.UserAgent != want && !strings.HasPrefix(r.UserAgent, want+" (") {
			t.Errorf("%s %s came with User-Agent %q, want %q", r.Method, r.Path, r.UserAgent, want)
		}
	}
	_, body := fetch(t, http.DefaultClient, "http://"+env.Server.Addr()+"/readyz")
	if !strings.Contains(body, "\nversion: "+version.String()+"\n") {
		t.Errorf("/readyz does not say the version:\n%s", body)
	}
}

// Before the App exists, the root URL (where an operator goes first) is a
// page that says where the setup link is, the start log, without being
// it: the link's token opens the setup to whoever has it.
func TestSetupModeRootSaysWhereTheLinkIs(t *testing.T) {
	gh := githubtest.NewServer(t)
	cfg, err := config.LoadServerFrom(&config.Server{
		DatabaseURL: storetest.URL(t, "sqlite"),
		DataDir:     t.TempDir(),
		MetricsAddr: "off",
		GitHub:      config.GitHub{APIURL: gh.APIURL(), GraphQLURL: gh.GraphQLURL(), WebURL: gh.WebURL()},
	}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	console := &logBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.New(ctx, cfg, zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), console)), app.Options{Listener: ln})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(sync.OnceFunc(func() { cancel(); <-done }))
	var token string
	gh.WaitFor(t, 20*time.Second, func() bool {
		m := regexp.MustCompile(`"version":"([^"]+)".*Open http://\S+/setup\?token=([0-9a-f]{32}) to register`).FindStringSubmatch(console.String())
		if m != nil {
			if m[1] != version.String() {
				t.Errorf("the start log names version %q, want %q", m[1], version.String())
			}
			token = m[2]
		}
		return m != nil
	})

	res, err := http.Get("http://" + srv.Addr() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	body := string(b)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET / in setup mode answered %d %q, want a 200 page:\n%s", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
	for _, want := range []string{"Strata is waiting to be set up", "server's start log", "/setup?token=...", "kubectl logs", "Strata " + version.String()} {
		if !strings.Contains(body, want) {
			t.Errorf("the root page lacks %q:\n%s", want, body)
		}
	}
	if strings.Contains(body, token) {
		t.Fatalf("the root page shows the setup token:\n%s", body)
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("the root page's CSP is %q, want the setup pages' own", csp)
	}
	// Any other page is still not found: only the root says where to go.
	if code := status(t, "http://"+srv.Addr()+"/repos/acme/infra"); code != http.StatusNotFound {
		t.Errorf("GET /repos/acme/infra in setup mode answered %d, want 404", code)
	}
}
