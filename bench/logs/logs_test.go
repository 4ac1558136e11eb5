// Package logs benchmarks a plan whose output is large (issue 21, item 3):
// time and peak memory of a real `strata serve` process planning a layer
// that prints 1, 16 and 64 MB, on SQLite and PostgreSQL, against
// `terraform plan -out` run by hand on the same layer.
//
//	STRATA_BENCH=1 go test ./bench/logs -run TestBenchLogs -v -timeout 60m
//
// STRATA_BENCH_SIZES picks the sizes in MB (default 1,16,64). The layer is
// terraform_data resources whose inputs are 1 MB strings of 100-character
// lines (Terraform prints each as a heredoc). Strata's time runs from the
// /plan comment's delivery to the completed check (as the fake GitHub
// receives it) and to the run's end (the JSON, the comment). Its memory is
// the server process's own: the benchmark builds cmd/strata and runs
// `strata serve` against the fake GitHub of this process, so neither the
// fake nor the test's heap is counted. The figure is that process's peak
// resident set (VmHWM, reset before the comment) above its resident set at
// rest before it, against the output's size. Terraform runs in child
// processes, whose memory is reported apart.
package logs

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/bench/internal/strataproc"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/engine/terraform/terraformtest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
	"strata.dev/strata/tooltest"
)

func TestBenchLogs(t *testing.T) {
	if os.Getenv("STRATA_BENCH") != "1" {
		t.Skip("set STRATA_BENCH=1 to run the benchmark")
	}
	bin := apptest.TerraformBin(t)
	if _, err := os.Stat(bin); err != nil {
		tooltest.Missing(t, "terraform at "+bin, err)
	}
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		tooltest.Missing(t, "GNU time at /usr/bin/time", err)
	}
	strata := strataproc.Build(t)
	sizes := os.Getenv("STRATA_BENCH_SIZES")
	if sizes == "" {
		sizes = "1,16,64"
	}
	for _, s := range strings.Split(sizes, ",") {
		mb, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("STRATA_BENCH_SIZES: %v", err)
		}
		for _, d := range []store.Dialect{store.SQLite, store.Postgres} {
			t.Run(fmt.Sprintf("%dMB_%s", mb, d), func(t *testing.T) { benchLog(t, strata, bin, mb, d) })
		}
	}
}

// bigLayer is a layer of n terraform_data resources whose inputs print
// about 1 MB each, its state at state.
func bigLayer(n int, state string) string {
	return terraformtest.BackendBlock(state) + fmt.Sprintf(`
locals {
  zeros = format("%%099d", 0)
}

resource "terraform_data" "big" {
  count = %d
  input = replace(format("%%01000000d", count.index), local.zeros, "${local.zeros}\n")
}
`, n)
}

// resourcesFor is how many 1 MB inputs print about mb MB: each prints
// 1.13 MB with its heredoc's indentation.
func resourcesFor(mb int) int { return max(1, mb*100/113) }

func benchLog(t *testing.T, strata, bin string, mb int, d store.Dialect) {
	stateDir := t.TempDir()
	state := filepath.Join(stateDir, "terraform.tfstate")
	layer := bigLayer(resourcesFor(mb), state)

	hand := byHand(t, bin, layer)
	t.Logf("by hand: init %.2fs, plan -out %.2fs printing %.1f MB, terraform's peak RSS %d MB",
		hand.init.Seconds(), hand.plan.Seconds(), float64(hand.output)/1e6, hand.maxRSS>>20)

	gh := githubtest.NewServer(t)
	repo := gh.AddRepo("acme", "infra")
	repo.Commit("main", map[string]string{"infra/big/main.tf": bigLayer(0, state)}, "Layer")
	db := storetest.URL(t, d)
	srv := serve(t, strata, gh, db, bin, stateDir)
	st, err := store.Open(context.Background(), db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	repo.Commit("grow", map[string]string{"infra/big/main.tf": layer}, "Grow")
	pr := repo.OpenPR("grow", "main", "alice")
	apptest.WaitIdle(t, st, time.Minute) // the jobs of the server's start
	seen := lastCheckRun(repo, pr.HeadSHA())

	// No autoplan before: the peak is measured above the server at rest
	// after its start, so what a first plan sets up counts too.
	before := srv.status(t, "VmRSS")
	cpuBefore := srv.cpu(t)
	srv.resetPeak(t)
	payload, event := repo.IssueCommentEvent(pr.Number, "alice", "/plan infra/big")
	start := time.Now()
	srv.Deliver(t, payload, event)
	checked := waitPlanned(t, repo, pr.HeadSHA(), "strata/plan: infra/big", seen)
	peakAtCheck := srv.status(t, "VmHWM") // before `show -json` is read, mostly
	cpuAtCheck := srv.cpu(t) - cpuBefore
	apptest.WaitIdle(t, st, 30*time.Minute)
	finished := time.Since(start)
	peak := srv.status(t, "VmHWM")
	cpu := srv.cpu(t) - cpuBefore

	run, err := st.LatestRun(t.Context(), repo.FullName(), "layer_plan", "infra/big")
	if err != nil {
		t.Fatal(err)
	}
	var stored storedLog
	if err := st.WriteLog(t.Context(), run.ID, &stored); err != nil {
		t.Fatal(err)
	}
	growth := peak - before
	t.Logf("in the run's log: %s", strings.Join(stored.strata, "; "))
	if strings.Contains(os.Getenv("GODEBUG"), "gctrace=1") {
		for _, l := range strings.Split(srv.Log.String(), "\n") {
			if strings.HasPrefix(l, "gc ") {
				t.Log("strata serve: " + l)
			}
		}
	}
	t.Logf("Strata on %s: comment -> completed check %.2fs (%.2fx plan -out, %.2fx init + plan -out), -> run finished %.2fs; stored log %.1f MB; strata serve's own CPU %.2fs until the check, %.2fs until the end",
		d, checked.Sub(start).Seconds(), checked.Sub(start).Seconds()/hand.plan.Seconds(),
		checked.Sub(start).Seconds()/(hand.init+hand.plan).Seconds(), finished.Seconds(), float64(stored.n)/1e6, cpuAtCheck.Seconds(), cpu.Seconds())
	t.Logf("strata serve on %s: RSS %d MB at rest after its start; peak above that %d MB until the check (%.2fx the output), %d MB until the end (%.2fx)",
		d, before>>20, (peakAtCheck-before)>>20, float64(peakAtCheck-before)/float64(hand.output),
		growth>>20, float64(growth)/float64(hand.output))
}

type handRun struct {
	init, plan time.Duration
	output     int64
	maxRSS     int64
}

// byHand runs `terraform init` and `terraform plan -out` in a fresh
// directory, timing each, counting what plan prints and its peak memory.
func byHand(t *testing.T, bin, layer string) handRun {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(layer), 0o644); err != nil {
		t.Fatal(err)
	}
	var r handRun
	for _, args := range [][]string{{"init", "-input=false"}, {"plan", "-input=false", "-no-color", "-out=tfplan"}} {
		// GNU time reports terraform's own peak: the rusage of a child
		// of this process would count this process's resident set, which
		// the child shares until its exec (vfork).
		cmd := exec.Command("/usr/bin/time", append([]string{"-f", "%M", "-o", filepath.Join(dir, "maxrss"), bin}, args...)...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
		var out counter
		cmd.Stdout = &out
		var stderr strings.Builder
		cmd.Stderr = &stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatalf("terraform %s: %v\n%s", args[0], err, stderr.String())
		}
		if args[0] == "init" {
			r.init = time.Since(start)
			continue
		}
		r.plan, r.output = time.Since(start), out.n
		kb, err := os.ReadFile(filepath.Join(dir, "maxrss"))
		if err != nil {
			t.Fatal(err)
		}
		if r.maxRSS, err = strconv.ParseInt(strings.TrimSpace(string(kb)), 10, 64); err != nil {
			t.Fatalf("GNU time's maximum resident set: %v", err)
		}
		r.maxRSS <<= 10
	}
	return r
}

// counter counts what Terraform printed by hand, and no more: a heavier
// reader would slow the run it measures.
type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// storedLog counts a run's stored log and keeps the lines Strata wrote into
// it ("[strata] terraform plan took 2s"), which say how long Terraform
// itself took inside the run.
type storedLog struct {
	n       int64
	partial []byte
	strata  []string
}

func (c *storedLog) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			c.partial = append(c.partial, rest...)
			break
		}
		line := append(c.partial, rest[:i]...)
		if bytes.HasPrefix(line, []byte("[strata] ")) && bytes.Contains(line, []byte(" took ")) {
			c.strata = append(c.strata, string(line))
		}
		c.partial, rest = c.partial[:0], rest[i+1:]
	}
	return len(p), nil
}

// server is a running `strata serve`.
type server struct{ *strataproc.Process }

// serve starts `strata serve` with one worker against gh and db, its
// Terraform bin sandboxed with stateDir writable, and waits until it is
// ready.
func serve(t *testing.T, strata string, gh *githubtest.Server, db, bin, stateDir string) *server {
	p, err := strataproc.Start("a", strataproc.Config{Strata: strata, GitHub: gh, DatabaseURL: db, DataDir: t.TempDir(),
		Env: []string{"STRATA_WORKERS=1", terraform.BinaryEnv + "=" + bin, "STRATA_TERRAFORM_SANDBOX_READ_WRITE=" + stateDir}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Cmd.Process.Kill(); <-p.Done })
	return &server{p}
}

// resetPeak resets the server's VmHWM to its current resident set
// (clear_refs 5).
func (s *server) resetPeak(t *testing.T) {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.Cmd.Process.Pid), []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
}

// status reads a size in kB from the server's /proc/PID/status, in bytes.
func (s *server) status(t *testing.T, field string) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", s.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n << 10
		}
	}
	t.Fatalf("no %s in the server's status", field)
	return 0
}

// cpu is the CPU time the server process used so far (user and system),
// its children's not counted.
func (s *server) cpu(t *testing.T) time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.Cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command's name, which ends at the last ')':
	// utime and stime are the 14th and 15th of the line, in clock ticks
	// (100 a second on Linux).
	f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	var ticks int64
	for _, v := range f[11:13] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		ticks += n
	}
	return time.Duration(ticks) * 10 * time.Millisecond
}

func lastCheckRun(repo *githubtest.Repo, sha string) int64 {
	var id int64
	for _, cr := range repo.CheckRuns(sha) {
		id = max(id, cr.ID)
	}
	return id
}

// waitPlanned waits for a check run named name, newer than after, to
// complete, and returns when the fake GitHub received its completion.
func waitPlanned(t *testing.T, repo *githubtest.Repo, sha, name string, after int64) time.Time {
	t.Helper()
	deadline := time.Now().Add(30 * time.Minute)
	for time.Now().Before(deadline) {
		for _, cr := range repo.CheckRuns(sha) {
			if cr.ID <= after || cr.Name != name || cr.Status != "completed" {
				continue
			}
			if cr.Conclusion != "success" {
				t.Fatalf("%s: %s %q %q", name, cr.Conclusion, cr.Title, cr.Summary)
			}
			return cr.Received
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("check %s not completed", name)
	return time.Time{}
}
