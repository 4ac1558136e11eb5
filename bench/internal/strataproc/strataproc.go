// Package strataproc runs Strata as its users do, for the benchmarks that
// measure it from outside: `strata serve` built from the tree, in a process
// of its own, against the fake GitHub of the benchmark's process. Its memory,
// its CPU and its garbage collector are then Strata's alone, and its
// latencies are what a client on the network sees.
package strataproc

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
)

// Build builds cmd/strata and, beside it as shipped, cmd/strata-sandbox,
// the launcher of Terraform's sandbox. It returns strata's path.
func Build(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/strata", "./cmd/strata-sandbox")
	cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..", "..")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	return filepath.Join(dir, "strata")
}

// Config is one `strata serve`.
type Config struct {
	Strata string // the binary (Build)
	GitHub *githubtest.Server
	// GitHubURL reaches GitHub (a recording proxy in front of it); its URL
	// when empty.
	GitHubURL   string
	DatabaseURL string
	DataDir     string
	// Env is added to the server's environment (STRATA_WORKERS, Terraform's
	// binary and sandbox paths, ...).
	Env []string
	// Args follow `serve` (flags such as --heartbeat).
	Args []string
}

// Process is a running `strata serve`.
type Process struct {
	Name    string
	Addr    string // the public listener, host:port
	Metrics string // the metrics listener, host:port
	Cmd     *exec.Cmd
	Log     *Tail
	Done    chan struct{} // closed when the process has exited
}

// Start starts `strata serve` and waits until it is ready. It does not use
// a testing.T, so that a goroutine may restart a server.
func Start(name string, c Config) (*Process, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	metrics, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	gh := c.GitHubURL
	if gh == "" {
		gh = c.GitHub.URL()
	}
	p := &Process{Name: name, Addr: addr, Metrics: metrics, Log: &Tail{Max: 4 << 20}, Done: make(chan struct{})}
	id, secret := c.GitHub.OAuthClient()
	p.Cmd = exec.Command(c.Strata, append([]string{"serve"}, c.Args...)...)
	p.Cmd.Env = append(append(os.Environ(),
		"STRATA_ADDR="+addr,
		"STRATA_PUBLIC_URL=http://"+addr,
		"STRATA_METRICS_ADDR="+metrics,
		"STRATA_STATE_ADDR=127.0.0.1:0",
		"STRATA_DATABASE_URL="+c.DatabaseURL,
		"STRATA_DATA_DIR="+c.DataDir,
		fmt.Sprintf("STRATA_GITHUB_APP_ID=%d", c.GitHub.AppID()),
		"STRATA_GITHUB_PRIVATE_KEY="+string(c.GitHub.PrivateKeyPEM()),
		"STRATA_GITHUB_WEBHOOK_SECRET="+apptest.WebhookSecret,
		"STRATA_GITHUB_API_URL="+gh+"/api/v3/",
		"STRATA_GITHUB_GRAPHQL_URL="+gh+"/api/graphql",
		"STRATA_GITHUB_WEB_URL="+gh+"/",
		"STRATA_GITHUB_CLIENT_ID="+id,
		"STRATA_GITHUB_CLIENT_SECRET="+secret,
	), c.Env...)
	p.Cmd.Stdout, p.Cmd.Stderr = p.Log, p.Log
	if err := p.Cmd.Start(); err != nil {
		return nil, err
	}
	go func() { _ = p.Cmd.Wait(); close(p.Done) }()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		if res, err := http.Get("http://" + addr + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p, nil
			}
		}
		select {
		case <-p.Done:
			return nil, fmt.Errorf("strata serve %s exited:\n%s", name, p.Log)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = p.Cmd.Process.Kill()
			<-p.Done
			return nil, fmt.Errorf("strata serve %s did not become ready:\n%s", name, p.Log)
		}
	}
}

// HookURL is where GitHub sends the server's webhooks.
func (p *Process) HookURL() string { return "http://" + p.Addr + "/api/github/hook" }

// Deliver sends a signed webhook with a fresh delivery id, as GitHub
// would, and fails the test unless it is accepted.
func (p *Process) Deliver(t testing.TB, payload githubtest.Payload, event string) {
	t.Helper()
	res := githubtest.Deliver(t, p.HookURL(), apptest.WebhookSecret, event, apptest.NewDeliveryID(), payload)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("webhook %s to strata serve %s answered %d", event, p.Name, res.StatusCode)
	}
}

// FreeAddr is a loopback address nothing listens on now.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// Tail keeps the last Max bytes written to it: a server's log (the last
// 4 MB), for a benchmark to read and for the report of a failure, bounded
// over a 30-minute soak.
type Tail struct {
	Max int
	mu  sync.Mutex
	b   []byte
}

func (l *Tail) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b = append(l.b, p...)
	if over := len(l.b) - l.Max; over > 0 {
		l.b = append(l.b[:0], l.b[over:]...)
	}
	return len(p), nil
}

func (l *Tail) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// LastLines is the last n lines of s.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
