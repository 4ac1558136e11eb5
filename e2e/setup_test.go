package e2e

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
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
	"strata.dev/strata/store/storetest"
)

// A fresh server without App credentials starts in setup mode and prints a
// setup URL with a one-time token. Strangers on the network, without the
// token or the operator's browser, can neither see the form nor finish a
// registration, not even with a real manifest code of their own. The
// operator, on the server's local address, is warned that GitHub cannot
// reach it, enters the https address of a tunnel instead, and continues
// there; an expired code is reported as GitHub's refusal, and the next
// attempt registers the App through GitHub's manifest flow. The
// credentials are stored owner-only with the chosen public URL, shown
// nowhere, and the server goes on as a configured server; the setup pages
// and the token then disappear, and a restart keeps the public URL.
func TestSetupFirstRunRegistersTheApp(t *testing.T) {
	gh := githubtest.NewServer(t)
	gh.AddManifestCode("one-time-code")
	gh.AddManifestCode("attacker-code") // from the attacker's own manifest flow
	dataDir := t.TempDir()
	cfg, err := config.LoadServerFrom(&config.Server{
		DatabaseURL: storetest.URL(t, "sqlite"),
		DataDir:     dataDir,
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
	log := zerolog.New(io.MultiWriter(zerolog.NewTestWriter(t), console))
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.New(ctx, cfg, log, app.Options{Listener: ln, Heartbeat: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	stop := sync.OnceFunc(func() { cancel(); <-done })
	t.Cleanup(stop)
	base := "http://" + srv.Addr()
	// The operator's tunnel: https in front of the server, as cloudflared
	// or ngrok would be.
	target, _ := url.Parse(base)
	tunnel := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(target))
	t.Cleanup(tunnel.Close)
	public := tunnel.URL

	// The operator reads the setup URL from the console.
	var setupURL string
	gh.WaitFor(t, 20*time.Second, func() bool {
		m := regexp.MustCompile(`Open (http://\S+/setup\?token=([0-9a-f]{32})) to register`).FindStringSubmatch(console.String())
		if m != nil {
			setupURL = m[1]
		}
		return m != nil
	})

	// A stranger without the token gets no form.
	for _, u := range []string{base + "/setup", base + "/setup?token=", base + "/setup?token=00000000000000000000000000000000"} {
		code, body := fetch(t, http.DefaultClient, u)
		if code != http.StatusForbidden || strings.Contains(body, "<form") || strings.Contains(body, "manifest") {
			t.Fatalf("GET %s by a stranger answered %d:\n%s", u, code, body)
		}
		if !strings.Contains(body, "setup URL that strata serve printed in its log") {
			t.Errorf("the refusal does not say where the setup URL is:\n%s", body)
		}
	}
	// Ready means serving: the setup page is served, behind a load balancer too.
	if res := status(t, base+"/readyz"); res != http.StatusOK {
		t.Fatalf("readyz in setup mode answered %d, want 200", res)
	}
	// The setup pages look like the UI, whose stylesheet is served already.
	css, err := http.Get(base + "/static/strata.css")
	if err != nil {
		t.Fatal(err)
	}
	css.Body.Close()
	if css.StatusCode != http.StatusOK || !strings.HasPrefix(css.Header.Get("Content-Type"), "text/css") {
		t.Fatalf("the stylesheet in setup mode: %d %s", css.StatusCode, css.Header.Get("Content-Type"))
	}

	// The operator's browser opens the URL and is asked where GitHub will
	// reach the server: its local address is offered, with a warning.
	browser := tunnel.Client()
	browser.Jar = mustJar(t)
	code, page := fetch(t, browser, setupURL)
	if code != http.StatusOK {
		t.Fatalf("the setup URL from the console answered %d:\n%s", code, page)
	}
	for _, want := range []string{`id="public-url"`, `value="` + base + `"`, `id="url-warning"`, "loopback address", "cloudflared tunnel --url", `href="/static/strata.css"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the first setup page lacks %q:\n%s", want, page)
		}
	}
	// The operator enters the tunnel's address; the browser continues there,
	// where GitHub will send it back, and gets the form for GitHub.
	q := url.Values{"token": {regexp.MustCompile(`token=([0-9a-f]{32})`).FindStringSubmatch(setupURL)[1]}, "step": {"create"}, "public_url": {public + "/"}, "org": {""}}
	code, page = fetch(t, browser, base+"/setup?"+q.Encode())
	if code != http.StatusOK {
		t.Fatalf("the second setup page answered %d:\n%s", code, page)
	}
	for _, want := range []string{gh.WebURL() + "settings/apps/new?state=", public + "/api/github/hook", public + "/setup/callback", public + "/api/github/auth", "pull_request_review", "&#34;checks&#34;:&#34;write&#34;"} {
		if !strings.Contains(page, want) {
			t.Errorf("setup page lacks %q", want)
		}
	}
	state := regexp.MustCompile(`state=([0-9a-f]+)`).FindStringSubmatch(page)
	if state == nil {
		t.Fatalf("no state on the setup page:\n%s", page)
	}

	// A stranger brings a real code of their own App to the callback: with a
	// made-up state, with a cookie made to match it, with the operator's
	// state (leaked from a URL) and no cookie or a made-up one. All refused.
	attacks := []struct{ name, state, cookie string }{
		{"forged state, no cookie", "forged", ""},
		{"forged state and cookie", "0123456789abcdef0123456789abcdef", "0123456789abcdef0123456789abcdef"},
		{"leaked state, no cookie", state[1], ""},
		{"leaked state, cookie set to it", state[1], state[1]},
	}
	for _, a := range attacks {
		req, _ := http.NewRequest(http.MethodGet, base+"/setup/callback?code=attacker-code&state="+a.state, nil)
		if a.cookie != "" {
			req.Header.Set("Cookie", "strata_setup="+a.cookie)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusForbidden {
			t.Errorf("callback by a stranger (%s) answered %d, want 403", a.name, res.StatusCode)
		}
	}
	if _, err := os.Stat(filepath.Join(dataDir, config.CredentialsFile)); !os.IsNotExist(err) {
		t.Fatalf("credentials stored after a stranger's callbacks (stat: %v)", err)
	}

	// The operator took more than an hour on GitHub: the code expired.
	code, failed := fetch(t, browser, public+"/setup/callback?code=expired-code&state="+state[1])
	if code != http.StatusBadGateway || !strings.Contains(failed, "GitHub refused the registration code (HTTP 404)") {
		t.Fatalf("the callback with an expired code answered %d:\n%s", code, failed)
	}

	// GitHub sends the operator's browser back with the code, to the
	// public URL.
	code, done1 := fetch(t, browser, public+"/setup/callback?code=one-time-code&state="+state[1])
	if code != http.StatusOK {
		t.Fatalf("the operator's callback answered %d:\n%s", code, done1)
	}
	if strings.Contains(done1, "PRIVATE KEY") || strings.Contains(done1, "whsec-") || strings.Contains(done1, "cs-one") {
		t.Fatalf("the setup page shows a secret:\n%s", done1)
	}
	for _, want := range []string{`href="` + gh.WebURL() + `apps/strata-test/installations/new"`, public + "/api/github/hook", `href="` + public + `/"`, "OAuth client is configured"} {
		if !strings.Contains(done1, want) {
			t.Errorf("the done page lacks %q:\n%s", want, done1)
		}
	}
	fi, err := os.Stat(filepath.Join(dataDir, config.CredentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials stored with mode %v, want 0600", fi.Mode().Perm())
	}
	// Ready with the App: the job queue runs (the body names the sandbox).
	gh.WaitFor(t, 20*time.Second, func() bool {
		code, body := fetch(t, http.DefaultClient, base+"/readyz")
		return code == http.StatusOK && strings.Contains(body, "sandbox:")
	})

	// The token and the flow die with the registration: no second one.
	if res := status(t, base+"/setup"); res != http.StatusNotFound {
		t.Fatalf("/setup after registration answered %d, want 404", res)
	}
	if code, _ := fetch(t, browser, setupURL); code != http.StatusNotFound {
		t.Fatalf("the setup URL with its token after registration answered %d, want 404", code)
	}
	if code, _ := fetch(t, browser, base+"/setup/callback?code=attacker-code&state="+state[1]); code != http.StatusNotFound {
		t.Fatalf("a second callback after registration answered %d, want 404", code)
	}
	if strings.Contains(console.String(), "whsec-") || strings.Contains(console.String(), "PRIVATE KEY") {
		t.Fatal("the log shows a secret of the App")
	}

	// It now serves webhooks signed with the secret GitHub gave it.
	repo := gh.AddRepo("acme", "infra")
	repo.Commit("main", repoFiles, "infra")
	repo.Commit("feature", map[string]string{"README.md": "v2\n"}, "docs")
	pr := repo.OpenPR("feature", "main", "alice")
	p, ev := repo.IssueCommentEvent(pr.Number, "alice", "/help")
	res := githubtest.Deliver(t, base+"/api/github/hook", "whsec-one-time-code", ev, apptest.NewDeliveryID(), p)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("webhook after setup answered %d", res.StatusCode)
	}
	gh.WaitFor(t, 20*time.Second, func() bool { return len(comments(repo, pr.Number, gh.BotLogin())) == 1 })

	// Restarted without STRATA_PUBLIC_URL, it keeps the public URL chosen
	// during setup for its links.
	stop()
	again, err := config.LoadServerFrom(&config.Server{
		DatabaseURL: cfg.DatabaseURL, DataDir: dataDir, MetricsAddr: "off",
		GitHub: config.GitHub{APIURL: gh.APIURL(), GraphQLURL: gh.GraphQLURL(), WebURL: gh.WebURL()},
	}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ln2, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv2, err := app.New(context.Background(), again, zerolog.New(zerolog.NewTestWriter(t)), app.Options{Listener: ln2})
	if err != nil {
		t.Fatal(err)
	}
	srv2.Close()
	if again.PublicURL != public {
		t.Errorf("after a restart, the public URL is %q, want %q", again.PublicURL, public)
	}
}

func status(t *testing.T, url string) int {
	t.Helper()
	code, _ := fetch(t, http.DefaultClient, url)
	return code
}

func fetch(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func mustJar(t *testing.T) *cookiejar.Jar {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return jar
}

// logBuffer keeps what the server logged, as an operator's console does.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
