package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// A server killed (SIGKILL) while a /helm-test runs -> the run is not
// retried (an upgrade may have been under way); the next server completes
// its check as interrupted, saying the next run unlocks a pending release.
// The cluster is an API server that never answers, so the run is caught
// mid-way, as a real process.
func TestReleasesInterruptedRunIsReported(t *testing.T) {
	done := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-done:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hang.Close)
	t.Cleanup(func() { close(done) })
	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	writeTemp(t, kubeconfig, fmt.Sprintf(`apiVersion: v1
kind: Config
clusters: [{name: hang, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: hang, context: {cluster: hang, user: u}}]
current-context: hang
`, hang.URL))
	serverConfig := filepath.Join(dir, "strata.yaml")
	writeTemp(t, serverConfig, fmt.Sprintf("clusters:\n  - name: ci\n    kubeconfig: %s\n", kubeconfig))

	gh := githubtest.NewServer(t)
	repo := gh.AddRepo("acme", "infra")
	files := chartFiles("charts/api")
	files[".strata.yaml"] = releaseOpts{}.strataYAML("ci")
	repo.Commit("main", files, "Add release api")
	repo.SetPermission("alice", "write")
	repo.Commit("values", map[string]string{"charts/api/values.yaml": "greeting: changed\n"}, "Values")
	pr := repo.OpenPR("values", "main", "alice")
	dbURL, dataDir := storetest.URL(t, store.SQLite), t.TempDir()

	p := serve(t, gh, serverConfig, dbURL, dataDir)
	p.deliver(repo.IssueCommentEvent(pr.Number, "alice", "/helm-test api"))
	gh.WaitFor(t, 30*time.Second, func() bool {
		cr, ok := repo.CheckRun(pr.HeadSHA(), apiCheck)
		return ok && cr.Title == "Testing"
	})
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done

	e := apptest.Start(t, apptest.Options{DatabaseURL: dbURL, DataDir: dataDir, GitHub: gh})
	var cr githubtest.CheckRun
	e.WaitFor(60*time.Second, func() bool {
		cr, _ = repo.CheckRun(pr.HeadSHA(), apiCheck)
		return cr.Status == "completed"
	})
	if cr.Conclusion != "failure" || cr.Title != "Helm test interrupted" || cr.ExternalID != "pr:1" {
		t.Fatalf("check = %s %q", cr.Conclusion, cr.Title)
	}
	wantText(t, "check summary", cr.Summary, "not run again", "marks a stuck revision failed")
	if n := len(e.Repo.CheckRuns(pr.HeadSHA())); n != 1 {
		t.Errorf("%d checks, want the one", n)
	}
	noViolations(t, gh)
}

// serve starts `strata serve` as a process with the server config file,
// database and data dir, against the fake GitHub, and waits until it is
// ready; it is killed when the test ends.
func serve(t *testing.T, gh *githubtest.Server, serverConfig, dbURL, dataDir string) *process {
	t.Helper()
	p := &process{t: t, addr: freeAddr(t), log: &strings.Builder{}, done: make(chan struct{})}
	p.cmd = exec.Command(binary(t), "serve", "--config", serverConfig, "--heartbeat", "1s")
	p.cmd.Env = append(os.Environ(),
		"STRATA_ADDR="+p.addr, "STRATA_DATABASE_URL="+dbURL, "STRATA_DATA_DIR="+dataDir, "STRATA_STATE_ADDR=127.0.0.1:0",
		fmt.Sprintf("STRATA_GITHUB_APP_ID=%d", gh.AppID()), "STRATA_GITHUB_PRIVATE_KEY="+string(gh.PrivateKeyPEM()),
		"STRATA_GITHUB_WEBHOOK_SECRET="+apptest.WebhookSecret, "STRATA_GITHUB_API_URL="+gh.APIURL(),
		"STRATA_GITHUB_GRAPHQL_URL="+gh.GraphQLURL(), "STRATA_GITHUB_WEB_URL="+gh.WebURL(),
	)
	p.cmd.Stdout, p.cmd.Stderr = &syncWriter{b: p.log}, &syncWriter{b: p.log}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	gh.WaitFor(t, 30*time.Second, func() bool {
		res, err := http.Get("http://" + p.addr + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})
	return p
}

func writeTemp(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}
