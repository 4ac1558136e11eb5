package e2e

import (
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

var (
	buildOnce sync.Once
	strataBin string
	buildErr  error
)

// binary builds cmd/strata once per test run: these tests kill and restart
// a real server process.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		_, file, _, _ := runtime.Caller(0)
		root := filepath.Join(filepath.Dir(file), "..")
		dir, err := os.MkdirTemp("", "strata-e2e-bin")
		if err != nil {
			buildErr = err
			return
		}
		strataBin = filepath.Join(dir, "strata")
		cmd := exec.Command("go", "build", "-o", strataBin, "./cmd/strata")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return strataBin
}

// slowGitHub puts latency in front of the fake, so jobs are caught mid-way.
func slowGitHub(t *testing.T, gh *githubtest.Server, delay time.Duration) string {
	target, _ := url.Parse(gh.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	// A killed server leaves requests cut short; that is the point here.
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

type process struct {
	t    *testing.T
	cmd  *exec.Cmd
	addr string
	log  *strings.Builder
	done chan struct{} // closed when the process exited, with err set
	err  error
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func startProcess(t *testing.T, gh *githubtest.Server, ghURL, dbURL, dataDir string, workers int) *process {
	t.Helper()
	p := &process{t: t, addr: freeAddr(t), log: &strings.Builder{}, done: make(chan struct{})}
	// A beat a second, as apptest's: a busy machine must not cost a live
	// run its lease. A killed server's runs are found lost 6 s after.
	p.cmd = exec.Command(binary(t), "serve", "--heartbeat", "1s")
	p.cmd.Env = append(os.Environ(),
		"STRATA_ADDR="+p.addr,
		"STRATA_METRICS_ADDR=127.0.0.1:0",
		"STRATA_STATE_ADDR=127.0.0.1:0",
		"STRATA_DATABASE_URL="+dbURL,
		"STRATA_DATA_DIR="+dataDir,
		fmt.Sprintf("STRATA_GITHUB_APP_ID=%d", gh.AppID()),
		"STRATA_GITHUB_PRIVATE_KEY="+string(gh.PrivateKeyPEM()),
		"STRATA_GITHUB_WEBHOOK_SECRET="+apptest.WebhookSecret,
		"STRATA_GITHUB_API_URL="+ghURL+"/api/v3/",
		"STRATA_GITHUB_GRAPHQL_URL="+ghURL+"/api/graphql",
		"STRATA_GITHUB_WEB_URL="+ghURL+"/",
		fmt.Sprintf("STRATA_WORKERS=%d", workers),
	)
	p.cmd.Stdout, p.cmd.Stderr = &syncWriter{b: p.log}, &syncWriter{b: p.log}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() { p.cmd.Process.Kill(); <-p.done })
	deadline := time.Now().Add(30 * time.Second)
	for {
		if res, err := http.Get("http://" + p.addr + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("strata serve did not become ready:\n%s", p.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

type syncWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (p *process) deliver(payload any, event string) {
	p.t.Helper()
	res := githubtest.Deliver(p.t, "http://"+p.addr+"/api/github/hook", apptest.WebhookSecret, event, apptest.NewDeliveryID(), payload)
	if res.StatusCode != http.StatusOK {
		p.t.Fatalf("webhook answered %d", res.StatusCode)
	}
}

func helpReplies(repo *githubtest.Repo, pr int, bot string) int {
	n := 0
	for _, c := range comments(repo, pr, bot) {
		if strings.Contains(c.Body, "Strata commands") {
			n++
		}
	}
	return n
}

// "Strata is killed (SIGKILL) with jobs queued and running; after a restart
// every job completes": queued jobs wait in the database, running ones are
// found by their silent heartbeat and run again. Then SIGTERM: running jobs
// finish, queued ones stay for the next start.
func TestJobsSurviveAKilledServer(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			testJobsSurvive(t, d)
		})
	}
}

func testJobsSurvive(t *testing.T, d store.Dialect) {
	gh := githubtest.NewServer(t)
	repo := gh.AddRepo("acme", "infra")
	repo.Commit("main", repoFiles, "infra")
	repo.Commit("feature", map[string]string{"README.md": "v2\n"}, "docs")
	pr := repo.OpenPR("feature", "main", "alice")
	ghURL := slowGitHub(t, gh, 150*time.Millisecond)
	dbURL, dataDir := storetest.URL(t, d), t.TempDir()
	bot := gh.BotLogin()

	const commands = 8
	first := startProcess(t, gh, ghURL, dbURL, dataDir, 2)
	for i := 0; i < commands; i++ {
		p, ev := repo.IssueCommentEvent(pr.Number, "alice", "/help")
		first.deliver(p, ev)
	}
	// Wait until jobs are running (the first reactions arrive), then kill.
	gh.WaitFor(t, 20*time.Second, func() bool { return countRequests(gh, "POST", "/reactions") >= 2 })
	if helpReplies(repo, pr.Number, bot) >= commands {
		t.Fatal("every job finished before the kill; the test proves nothing")
	}
	first.cmd.Process.Signal(syscall.SIGKILL)
	<-first.done

	second := startProcess(t, gh, ghURL, dbURL, dataDir, 2)
	gh.WaitFor(t, 60*time.Second, func() bool { return helpReplies(repo, pr.Number, bot) >= commands })

	// SIGTERM with more work queued: the running jobs finish, the process
	// exits cleanly, and the rest waits in the queue.
	before := helpReplies(repo, pr.Number, bot)
	reacted := countRequests(gh, "POST", "/reactions")
	for i := 0; i < commands; i++ {
		p, ev := repo.IssueCommentEvent(pr.Number, "alice", "/help")
		second.deliver(p, ev)
	}
	gh.WaitFor(t, 20*time.Second, func() bool { return countRequests(gh, "POST", "/reactions") >= reacted+2 })
	second.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-second.done:
		if second.err != nil {
			t.Fatalf("strata serve exited with %v after SIGTERM:\n%s", second.err, second.log)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("strata serve did not stop within 60s of SIGTERM")
	}
	afterStop := helpReplies(repo, pr.Number, bot)
	if afterStop == before {
		t.Fatalf("no running job finished during the graceful shutdown:\n%s", second.log)
	}
	third := startProcess(t, gh, ghURL, dbURL, dataDir, 2)
	_ = third
	gh.WaitFor(t, 60*time.Second, func() bool { return helpReplies(repo, pr.Number, bot) >= 2*commands })
	// A job killed after replying could reply again; one killed before it
	// replied must not be lost. At most the two killed in flight repeat.
	if n := helpReplies(repo, pr.Number, bot); n > 2*commands+2 {
		t.Fatalf("%d replies to %d commands", n, 2*commands)
	}
}

func countRequests(gh *githubtest.Server, method, pathPart string) int {
	n := 0
	for _, r := range gh.Requests() {
		if r.Method == method && strings.Contains(r.Path, pathPart) {
			n++
		}
	}
	return n
}
