// Package logs benchmarks a plan whose output is large (issue 21, item 3):
// time and peak memory of Strata planning a layer that prints 1, 16 and 64
// MB, on SQLite and PostgreSQL, against `terraform plan -out` run by hand
// on the same layer.
//
//	STRATA_BENCH=1 go test ./bench/logs -run TestBenchLogs -v -timeout 60m
//
// STRATA_BENCH_SIZES picks the sizes in MB (default 1,16,64). The layer is
// terraform_data resources whose inputs are 1 MB strings of 100-character
// lines (Terraform prints each as a heredoc). Strata's time runs from the
// /plan comment's delivery to the completed check (as the fake GitHub
// receives it) and to the run's end (the JSON, the comment); its memory is
// this process's peak resident set (VmHWM, reset before each plan) above
// what it held before, against the output's size. Terraform runs in child
// processes, whose memory is reported apart.
package logs

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/store"
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
			t.Run(fmt.Sprintf("%dMB_%s", mb, d), func(t *testing.T) { benchLog(t, bin, mb, d) })
		}
	}
}

// bigLayer is a layer of n terraform_data resources whose inputs print
// about 1 MB each, its state at state.
func bigLayer(n int, state string) string {
	return terraform.BackendBlock(state) + fmt.Sprintf(`
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

func benchLog(t *testing.T, bin string, mb int, d store.Dialect) {
	stateDir := t.TempDir()
	state := filepath.Join(stateDir, "terraform.tfstate")
	layer := bigLayer(resourcesFor(mb), state)

	hand := byHand(t, bin, layer)
	t.Logf("by hand: init %.2fs, plan -out %.2fs printing %.1f MB, terraform's peak RSS %d MB",
		hand.init.Seconds(), hand.plan.Seconds(), float64(hand.output)/1e6, hand.maxRSS>>20)

	// The server's own heartbeat (10 s, a 30 s lease), not the tests' 100 ms:
	// a loaded 2-core machine stalls a database write past 300 ms.
	env := apptest.Start(t, apptest.Options{Dialect: d, Workers: 1, Heartbeat: 10 * time.Second, Configure: func(c *config.Server) {
		c.Terraform.SandboxPaths.ReadWrite = []string{stateDir}
	}})
	repo := env.Repo
	repo.Commit("main", map[string]string{"infra/big/main.tf": bigLayer(0, state)}, "Layer")
	repo.Commit("grow", map[string]string{"infra/big/main.tf": layer}, "Grow")
	pr := repo.OpenPR("grow", "main", "alice")
	env.WaitIdle(10 * time.Minute) // the autoplan of the opened PR
	payload, event := repo.IssueCommentEvent(pr.Number, "alice", "/plan infra/big")
	seen := lastCheckRun(env, pr.HeadSHA())

	before := settledRSS(t)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	liveBefore := ms.HeapAlloc
	heap := sampleHeap()
	resetPeak(t)
	start := time.Now()
	env.Deliver(payload, event)
	checked := waitPlanned(t, env, pr.HeadSHA(), "strata/plan: infra/big", seen)
	peakAtCheck := peakRSS(t) // before `show -json` is read, mostly
	env.WaitIdle(30 * time.Minute)
	finished := time.Since(start)
	peak := peakRSS(t)
	heapPeak := heap()

	run, err := env.Server.Store().LatestRun(t.Context(), repo.FullName(), "layer_plan", "infra/big")
	if err != nil {
		t.Fatal(err)
	}
	run, err = env.Server.Store().Run(t.Context(), run.ID)
	if err != nil {
		t.Fatal(err)
	}
	growth := peak - before
	t.Logf("Strata on %s: Go heap in use at most %d MB (%d MB live before), the garbage collector's headroom (GOGC) included", d, heapPeak>>20, liveBefore>>20)
	t.Logf("Strata on %s: comment -> completed check %.2fs (%.2fx plan -out, %.2fx init + plan -out), -> run finished %.2fs; "+
		"stored log %.1f MB; server's peak RSS above the %d MB it held before: %d MB until the check (%.2fx the output), %d MB until the end (%.2fx)",
		d, checked.Sub(start).Seconds(), checked.Sub(start).Seconds()/hand.plan.Seconds(),
		checked.Sub(start).Seconds()/(hand.init+hand.plan).Seconds(), finished.Seconds(),
		float64(len(run.Log))/1e6, before>>20, (peakAtCheck-before)>>20, float64(peakAtCheck-before)/float64(hand.output),
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
		cmd := exec.Command(bin, args...)
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
		r.maxRSS = cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10
	}
	return r
}

type counter struct{ n int64 }

func (c *counter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

// sampleHeap samples the Go heap in use every 10 ms until the returned
// function is called, which returns the largest sample.
func sampleHeap() func() uint64 {
	stop, done := make(chan bool), make(chan uint64)
	go func() {
		var peak uint64
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapInuse)
			select {
			case <-stop:
				done <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 { close(stop); return <-done }
}

// settledRSS is this process's resident set once the garbage is collected
// and returned.
func settledRSS(t *testing.T) int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return status(t, "VmRSS")
}

// resetPeak resets VmHWM to the current resident set (clear_refs 5).
func resetPeak(t *testing.T) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatalf("reset the peak RSS: %v", err)
	}
}

func peakRSS(t *testing.T) int64 { return status(t, "VmHWM") }

// status reads a size in kB from /proc/self/status, in bytes.
func status(t *testing.T, field string) int64 {
	f, err := os.Open("/proc/self/status")
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
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

func lastCheckRun(env *apptest.Env, sha string) int64 {
	var id int64
	for _, cr := range env.Repo.CheckRuns(sha) {
		id = max(id, cr.ID)
	}
	return id
}

// waitPlanned waits for a check run named name, newer than after, to
// complete, and returns when the fake GitHub received its completion.
func waitPlanned(t *testing.T, env *apptest.Env, sha, name string, after int64) time.Time {
	t.Helper()
	deadline := time.Now().Add(30 * time.Minute)
	for time.Now().Before(deadline) {
		for _, cr := range env.Repo.CheckRuns(sha) {
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
