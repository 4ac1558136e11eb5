package soak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/sandbox"
)

// build builds cmd/strata, the binary the soak runs and measures.
func build(t *testing.T) string {
	_, file, _, _ := runtime.Caller(0)
	out := filepath.Join(t.TempDir(), "strata")
	cmd := exec.Command("go", "build", "-o", out, "./cmd/strata")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return out
}

// spec is what every `strata serve` of one configuration shares: the
// binary, the fake GitHub (reached through ghURL), the database, the data
// dir (the replicas' volume, with the key that seals plans) and the
// layers' state dir, which the sandbox opens to Terraform.
type spec struct {
	strata, terraform string
	gh                *githubtest.Server
	ghURL             string
	db, dataDir       string
	stateDir          string
}

// server is one running `strata serve` process.
type server struct {
	name    string // "a", "b"
	start   int    // 1 for the first process of that name, 2 after a restart...
	cmd     *exec.Cmd
	addr    string // the public listener
	metrics string // the metrics listener
	log     *tail
	done    chan struct{}
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// serve starts `strata serve` with 2 workers and a 1 s heartbeat (as the
// e2e tests with two replicas: a busy machine does not take a live run for
// lost), and waits until it is ready. It does not use t, so that the
// killer's goroutine can restart a replica.
func (sp spec) serve(name string, start int) (*server, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	metrics, err := freeAddr()
	if err != nil {
		return nil, err
	}
	s := &server{name: name, start: start, addr: addr, metrics: metrics, log: &tail{max: 256 << 10}, done: make(chan struct{})}
	id, secret := sp.gh.OAuthClient()
	s.cmd = exec.Command(sp.strata, "serve", "--heartbeat", "1s")
	s.cmd.Env = append(os.Environ(),
		"STRATA_ADDR="+addr,
		"STRATA_PUBLIC_URL=http://"+addr,
		"STRATA_METRICS_ADDR="+metrics,
		"STRATA_STATE_ADDR=127.0.0.1:0",
		"STRATA_DATABASE_URL="+sp.db,
		"STRATA_DATA_DIR="+sp.dataDir,
		fmt.Sprintf("STRATA_GITHUB_APP_ID=%d", sp.gh.AppID()),
		"STRATA_GITHUB_PRIVATE_KEY="+string(sp.gh.PrivateKeyPEM()),
		"STRATA_GITHUB_WEBHOOK_SECRET="+apptest.WebhookSecret,
		"STRATA_GITHUB_API_URL="+sp.ghURL+"/api/v3/",
		"STRATA_GITHUB_GRAPHQL_URL="+sp.ghURL+"/api/graphql",
		"STRATA_GITHUB_WEB_URL="+sp.ghURL+"/",
		"STRATA_GITHUB_CLIENT_ID="+id,
		"STRATA_GITHUB_CLIENT_SECRET="+secret,
		"STRATA_WORKERS=2",
		terraform.BinaryEnv+"="+sp.terraform,
		"STRATA_TERRAFORM_SANDBOX_READ_WRITE="+sp.stateDir,
	)
	s.cmd.Stdout, s.cmd.Stderr = s.log, s.log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if res, err := http.Get("http://" + addr + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return s, nil
			}
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("strata serve %s exited:\n%s", name, s.log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.kill()
			return nil, fmt.Errorf("strata serve %s did not become ready:\n%s", name, s.log)
		}
	}
}

// kill SIGKILLs the server and every process it started (the sandbox,
// Terraform, its provisioners), as when its container dies.
func (s *server) kill() {
	pids := sandbox.Descendants(s.cmd.Process.Pid)
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	<-s.done
}

// runs reports whether a process below the server runs with arg among its
// arguments (Terraform's subcommand), as e2e's runsBelow.
func (s *server) runs(arg string) bool {
	for _, p := range sandbox.Descendants(s.cmd.Process.Pid) {
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(p), "cmdline"))
		if err != nil {
			continue
		}
		for _, a := range strings.Split(string(cmdline), "\x00") {
			if a == arg {
				return true
			}
		}
	}
	return false
}

// deliver sends a signed webhook with a fresh delivery id, as GitHub would.
func (s *server) deliver(t *testing.T, payload githubtest.Payload, event string) {
	t.Helper()
	res := githubtest.Deliver(t, "http://"+s.addr+"/api/github/hook", apptest.WebhookSecret, event, apptest.NewDeliveryID(), payload)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("webhook %s to %s answered %d", event, s.name, res.StatusCode)
	}
}

// usage is what the soak samples of a server process.
type usage struct {
	rss        int64 // resident set, bytes
	fds        int   // open file descriptors
	goroutines int   // go_goroutines of its metrics listener
	procs      int   // processes below it (Terraform, builds, the sandbox)
}

func (s *server) usage(ctx context.Context) (usage, error) {
	pid := s.cmd.Process.Pid
	var u usage
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	for _, l := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return u, err
			}
			u.rss = kb << 10
		}
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return u, err
	}
	u.fds = len(fds)
	u.procs = len(sandbox.Descendants(pid))
	u.goroutines, err = s.goroutines(ctx)
	return u, err
}

// goroutines reads go_goroutines from the server's metrics listener.
func (s *server) goroutines(ctx context.Context) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.metrics+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "go_goroutines "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, errors.New("no go_goroutines in /metrics")
}

// tail keeps the last max bytes a process wrote: enough to show why it
// failed, bounded over a 30-minute run.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (l *tail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if over := len(l.b) - l.max; over > 0 {
		l.b = append(l.b[:0], l.b[over:]...)
	}
	return len(p), nil
}

func (l *tail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}
