// Package layers benchmarks Terraform layers end to end (issue 3, item 12):
// the time from webhook delivery to the completed `strata/plan` check,
// against `terraform init` and `terraform plan` run by hand on the same
// directory, and a PR touching 12 layers planned by 4 workers against 1.
//
//	STRATA_BENCH=1 go test ./bench/layers -run TestBenchLayers -v -timeout 30m
//
// Each iteration alternates Strata and the hand run so that both share
// whatever else the machine is doing; the medians are reported, with where
// Strata's time went (from the run records) and, for 12 layers, the CPU
// time used and how long Terraform's commands took with 1 and 4 workers.
package layers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/tooltest"
)

func iterations() int {
	if n, err := strconv.Atoi(os.Getenv("STRATA_BENCH_ITERATIONS")); err == nil && n > 0 {
		return n
	}
	return 5
}

func TestBenchLayers(t *testing.T) {
	if os.Getenv("STRATA_BENCH") != "1" {
		t.Skip("set STRATA_BENCH=1 to run the benchmark")
	}
	bin := apptest.TerraformBin(t)
	if _, err := os.Stat(bin); err != nil {
		tooltest.Missing(t, "terraform at "+bin, err)
	}
	for _, n := range []int{2000, 200} {
		t.Run(fmt.Sprintf("plan_%d", n), func(t *testing.T) { benchPlan(t, bin, n) })
	}
	t.Run("12_layers", func(t *testing.T) { benchLayers(t, 12, 200) })
}

// benchPlan: one layer of n resources, autoplanned by Strata after a push
// (webhook delivery to completed check), and planned by hand.
func benchPlan(t *testing.T, bin string, n int) {
	stateDir := t.TempDir()
	env := apptest.Start(t, withState(apptest.Options{Workers: 4}, stateDir))
	state := filepath.Join(stateDir, "terraform.tfstate")
	layer := layerFile(t, n, state)
	repo := env.Repo
	repo.Commit("main", map[string]string{"infra/big/main.tf": layerFile(t, 1, state)}, "Layer")
	repo.Commit("grow", map[string]string{"infra/big/main.tf": layer}, "Grow")
	pr := repo.OpenPR("grow", "main", "alice")

	var strata, hand []time.Duration
	var phases []breakdown
	for i := 0; i < iterations(); i++ {
		// A push to the layer each time: autoplan on synchronize, with a
		// tree Strata has not fetched yet.
		pr.Push(map[string]string{"infra/big/main.tf": fmt.Sprintf("%s\n# iteration %d\n", layer, i)}, "Touch")
		head := pr.HeadSHA()
		payload, event := repo.PullRequestEvent("synchronize", pr.Number)
		start := time.Now()
		env.Deliver(payload, event)
		waitCompleted(t, env, head, []string{"strata/plan: infra/big"})
		done := time.Now()
		strata = append(strata, done.Sub(start))
		phases = append(phases, phasesOf(t, env, head, start, done))
		hand = append(hand, byHand(t, bin, layer))
		t.Logf("  iteration %d: Strata %.3fs (%s), by hand %.3fs", i, strata[i].Seconds(), phases[i], hand[i].Seconds())
	}
	report(t, fmt.Sprintf("%d terraform_data resources", n), "by hand (init + plan)", median(hand), "Strata (webhook -> completed check)", median(strata))
	reportPhases(t, phases)
}

// breakdown is where Strata's time went, from the run records: the wait for
// the event job, the event job (config, layers, files, lock and checks), the
// wait for the plan job, the plan job up to its layer's slot, and from there
// to the completed check (engine, store, check update).
type breakdown [5]time.Duration

func (b breakdown) String() string {
	var parts []string
	for i, name := range phaseNames {
		parts = append(parts, fmt.Sprintf("%s %.3fs", name, b[i].Seconds()))
	}
	return strings.Join(parts, ", ")
}

var phaseNames = [5]string{"webhook -> event job", "event job", "-> plan job", "plan job -> slot", "slot -> check completed"}

func phasesOf(t *testing.T, env *apptest.Env, head string, start, done time.Time) breakdown {
	t.Helper()
	st := env.Server.Store()
	rows, err := st.DB().Query(st.Rebind(`SELECT kind, started_at, finished_at, log FROM runs WHERE head_sha = ? ORDER BY id`), head)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var evStart, evEnd, planStart, slot int64
	for rows.Next() {
		var kind, log string
		var s, f int64
		if err := rows.Scan(&kind, &s, &f, &log); err != nil {
			t.Fatal(err)
		}
		switch kind {
		case "pull_request":
			evStart, evEnd = s, f
		case "layer_plan":
			planStart = s
			for _, line := range strings.Split(log, "\n") {
				if v, ok := strings.CutPrefix(line, "[strata] layer slot taken at "); ok {
					slot, _ = strconv.ParseInt(v, 10, 64)
				}
			}
		}
	}
	ms := func(a, b int64) time.Duration { return time.Duration(b-a) * time.Millisecond }
	t0 := start.UnixMilli()
	return breakdown{ms(t0, evStart), ms(evStart, evEnd), ms(evEnd, planStart), ms(planStart, slot), ms(slot, done.UnixMilli())}
}

func reportPhases(t *testing.T, bs []breakdown) {
	var m breakdown
	for i := range phaseNames {
		var ds []time.Duration
		for _, b := range bs {
			ds = append(ds, b[i])
		}
		m[i] = median(ds)
	}
	t.Logf("  medians: %s", m)
}

// benchLayers: a PR touching k layers, planned by 4 workers and by 1. Next
// to the wall time it reports the CPU time used meanwhile by this process
// (Strata, the fake GitHub) and by Terraform (the children), and how long
// Terraform's commands took on average: the same commands taking longer with
// 4 workers than with 1 means they waited for a CPU.
func benchLayers(t *testing.T, k, n int) {
	type result struct {
		wall, strataCPU, terraformCPU time.Duration
		steps                         map[string]time.Duration // mean per command
	}
	run := func(workers int) result {
		stateDir := t.TempDir()
		env := apptest.Start(t, withState(apptest.Options{Workers: workers}, stateDir))
		base, change := map[string]string{}, map[string]string{}
		var checks []string
		for i := 0; i < k; i++ {
			dir := fmt.Sprintf("infra/l%02d", i)
			state := filepath.Join(stateDir, dir, "terraform.tfstate")
			base[dir+"/main.tf"] = layerFile(t, 1, state)
			change[dir+"/main.tf"] = layerFile(t, n, state)
			checks = append(checks, "strata/plan: "+dir)
		}
		env.Repo.Commit("main", base, "Layers")
		env.Repo.Commit("grow", change, "Grow")
		pr := env.Repo.OpenPR("grow", "main", "alice")
		payload, event := env.Repo.PullRequestEvent("opened", pr.Number)
		self0, children0 := cpu(syscall.RUSAGE_SELF), cpu(syscall.RUSAGE_CHILDREN)
		start := time.Now()
		env.Deliver(payload, event)
		waitCompleted(t, env, pr.HeadSHA(), checks)
		r := result{wall: time.Since(start)}
		r.strataCPU, r.terraformCPU = cpu(syscall.RUSAGE_SELF)-self0, cpu(syscall.RUSAGE_CHILDREN)-children0
		r.steps = stepTimes(t, env, pr.HeadSHA())
		env.Stop()
		return r
	}
	var par, seq []time.Duration
	for i := 0; i < max(1, iterations()/2); i++ {
		for _, workers := range []int{1, 4} {
			r := run(workers)
			if workers == 1 {
				seq = append(seq, r.wall)
			} else {
				par = append(par, r.wall)
			}
			t.Logf("  %d worker(s): wall %.2fs, CPU %.2fs (Strata and fake GitHub %.2fs, Terraform %.2fs) = %.0f%% of 2 cores; "+
				"Terraform's commands took on average: init %dms, plan %dms, show -json %dms",
				workers, r.wall.Seconds(), (r.strataCPU + r.terraformCPU).Seconds(), r.strataCPU.Seconds(), r.terraformCPU.Seconds(),
				100*(r.strataCPU+r.terraformCPU).Seconds()/(2*r.wall.Seconds()),
				r.steps["init"].Milliseconds(), r.steps["plan"].Milliseconds(), r.steps["show -json"].Milliseconds())
		}
	}
	report(t, fmt.Sprintf("PR touching %d layers of %d resources", k, n), "1 worker (one after another)", median(seq), "4 workers", median(par))
}

func cpu(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// stepTimes reads from the plan runs' logs how long each Terraform command
// took, on average per command.
func stepTimes(t *testing.T, env *apptest.Env, head string) map[string]time.Duration {
	st := env.Server.Store()
	rows, err := st.DB().Query(st.Rebind(`SELECT log FROM runs WHERE kind = 'layer_plan' AND head_sha = ?`), head)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	sum, count := map[string]time.Duration{}, map[string]int{}
	for rows.Next() {
		var log string
		if err := rows.Scan(&log); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(log, "\n") {
			rest, ok := strings.CutPrefix(line, "[strata] terraform ")
			if !ok {
				continue
			}
			cmd, ms, ok := strings.Cut(strings.TrimSuffix(rest, " ms"), " took ")
			if v, err := strconv.Atoi(ms); ok && err == nil {
				sum[cmd] += time.Duration(v) * time.Millisecond
				count[cmd]++
			}
		}
	}
	for cmd := range sum {
		sum[cmd] /= time.Duration(count[cmd])
	}
	return sum
}

// withState opens the layers' state dir to Terraform's sandbox.
func withState(opts apptest.Options, stateDir string) apptest.Options {
	opts.Configure = func(c *config.Server) { c.Terraform.SandboxPaths.ReadWrite = []string{stateDir} }
	return opts
}

func layerFile(t *testing.T, n int, state string) string {
	t.Helper()
	dir := t.TempDir()
	if err := terraform.WriteFixtureLayer(dir, n, state); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// byHand runs `terraform init` and `terraform plan` in a fresh directory
// holding the layer, as someone would on a checkout.
func byHand(t *testing.T, bin, layer string) time.Duration {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(layer), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, args := range [][]string{{"init", "-input=false"}, {"plan", "-input=false"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
		}
	}
	return time.Since(start)
}

func waitCompleted(t *testing.T, env *apptest.Env, sha string, names []string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) {
		done := 0
		for _, name := range names {
			if cr, ok := env.Repo.CheckRun(sha, name); ok && cr.Status == "completed" {
				if cr.Conclusion != "success" {
					t.Fatalf("%s: %s %q %q", name, cr.Conclusion, cr.Title, cr.Summary)
				}
				done++
			}
		}
		if done == len(names) {
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("checks %v not completed", names)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func report(t *testing.T, what, baseName string, base time.Duration, name string, d time.Duration) {
	t.Logf("%s: %s %.2fs, %s %.2fs: ratio %.2f, difference %+.2fs",
		what, baseName, base.Seconds(), name, d.Seconds(), d.Seconds()/base.Seconds(), (d - base).Seconds())
}
