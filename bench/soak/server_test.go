package soak

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"strata.dev/strata/bench/internal/strataproc"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/sandbox"
)

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

// server is one running `strata serve` process: the start-th of its name
// (1 for the first, 2 after a restart...).
type server struct {
	*strataproc.Process
	name  string // "a", "b"
	start int
}

// serve starts `strata serve` with 2 workers and a 1 s heartbeat (as the
// e2e tests with two replicas: a busy machine does not take a live run for
// lost), and waits until it is ready. It does not use t, so that the
// killer's goroutine can restart a replica.
func (sp spec) serve(name string, start int) (*server, error) {
	p, err := strataproc.Start(name, strataproc.Config{Strata: sp.strata, GitHub: sp.gh, GitHubURL: sp.ghURL,
		DatabaseURL: sp.db, DataDir: sp.dataDir, Args: []string{"--heartbeat", "1s"},
		Env: []string{"STRATA_WORKERS=2", terraform.BinaryEnv + "=" + sp.terraform, "STRATA_TERRAFORM_SANDBOX_READ_WRITE=" + sp.stateDir}})
	if err != nil {
		return nil, err
	}
	return &server{Process: p, name: name, start: start}, nil
}

// kill SIGKILLs the server and every process it started (the sandbox,
// Terraform, its provisioners), as when its container dies.
func (s *server) kill() {
	pids := sandbox.Descendants(s.Cmd.Process.Pid)
	_ = s.Cmd.Process.Signal(syscall.SIGKILL)
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	<-s.Done
}

// runs reports whether a process below the server runs with arg among its
// arguments (Terraform's subcommand), as e2e's runsBelow.
func (s *server) runs(arg string) bool {
	for _, p := range sandbox.Descendants(s.Cmd.Process.Pid) {
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

// usage is what the soak samples of a server process.
type usage struct {
	rss        int64 // resident set, bytes
	fds        int   // open file descriptors
	goroutines int   // go_goroutines of its metrics listener
	procs      int   // processes below it (Terraform, builds, the sandbox)
}

func (s *server) usage(ctx context.Context) (usage, error) {
	pid := s.Cmd.Process.Pid
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
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+s.Metrics+"/metrics", nil)
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
