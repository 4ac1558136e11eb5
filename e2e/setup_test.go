package e2e

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"strata.dev/strata/app"
	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store/storetest"
)

// A fresh server without App credentials starts in setup mode, registers the
// App through GitHub's manifest flow, stores the credentials owner-only and
// goes on as a configured server; the setup pages then disappear.
func TestFirstRunRegistersTheApp(t *testing.T) {
	gh := githubtest.NewServer(t)
	gh.AddManifestCode("one-time-code")
	dataDir := t.TempDir()
	cfg, err := config.LoadServerFrom(&config.Server{
		DatabaseURL: storetest.URL(t, "sqlite"),
		DataDir:     dataDir,
		GitHub:      config.GitHub{APIURL: gh.APIURL(), GraphQLURL: gh.GraphQLURL(), WebURL: gh.WebURL()},
	}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.New(ctx, cfg, zerolog.New(zerolog.NewTestWriter(t)), app.Options{Listener: ln, Heartbeat: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	base := "http://" + srv.Addr()

	page := get(t, base+"/setup")
	for _, want := range []string{gh.WebURL() + "settings/apps/new?state=", base + "/api/github/hook", base + "/setup/callback", "pull_request_review", "&#34;checks&#34;:&#34;write&#34;"} {
		if !strings.Contains(page, want) {
			t.Errorf("setup page lacks %q", want)
		}
	}
	state := regexp.MustCompile(`state=([0-9a-f]+)`).FindStringSubmatch(page)
	if state == nil {
		t.Fatalf("no state on the setup page:\n%s", page)
	}
	if res := status(t, base+"/setup/callback?code=one-time-code&state=forged"); res != http.StatusBadRequest {
		t.Fatalf("callback with a forged state answered %d, want 400", res)
	}
	if res := status(t, base+"/readyz"); res != http.StatusServiceUnavailable {
		t.Fatalf("readyz in setup mode answered %d, want 503", res)
	}

	done1 := get(t, base+"/setup/callback?code=one-time-code&state="+state[1])
	if strings.Contains(done1, "PRIVATE KEY") || strings.Contains(done1, "whsec-") || strings.Contains(done1, "cs-one") {
		t.Fatalf("the setup page shows a secret:\n%s", done1)
	}
	fi, err := os.Stat(filepath.Join(dataDir, config.CredentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials stored with mode %v, want 0600", fi.Mode().Perm())
	}
	gh.WaitFor(t, 20*time.Second, func() bool { return status(t, base+"/readyz") == http.StatusOK })
	if res := status(t, base+"/setup"); res != http.StatusNotFound {
		t.Fatalf("/setup after registration answered %d, want 404", res)
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
}

func status(t *testing.T, url string) int {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}
