// Package layers benchmarks Terraform layers end to end (issue 3, item 12;
// issue 10, item 8): the time from a `/plan` comment's delivery to the
// completed `strata/plan` check, as the fake GitHub receives it, against
// `terraform init` and `terraform plan -out` run by hand on the same
// directory, on layers of `terraform_data` and of the test provider; and a
// PR touching 12 layers planned by 4 workers against 1.
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
	"strata.dev/strata/engine/terraform/terraformtest"
	"strata.dev/strata/engine/terraform/testprovider/providertest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
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
		for _, d := range storetest.Dialects {
			t.Run(fmt.Sprintf("plan_%d/%s", n, d), func(t *testing.T) { benchPlan(t, bin, n, d) })
		}
	}
	t.Run("plan_provider_200", func(t *testing.T) { benchProviderPlan(t, bin, 200) })
	t.Run("12_layers", func(t *testing.T) { benchLayers(t, 12, 200) })
}

// benchPlan: one layer of n resources, planned by Strata on a `/plan`
// comment (from the comment's delivery to the completed check, timed when
// the fake GitHub receives it), and by hand (`init` then `plan -out` in a
// fresh directory), alternately, on the database d.
func benchPlan(t *testing.T, bin string, n int, d store.Dialect) {
	stateDir := t.TempDir()
	state := filepath.Join(stateDir, "terraform.tfstate")
	benchLayerPlan(t, bin, fmt.Sprintf("%d terraform_data resources, %s", n, d), withState(apptest.Options{Workers: 4, Dialect: d}, stateDir),
		layerFile(t, 1, state), layerFile(t, n, state), nil)
}

// benchProviderPlan: benchPlan on a layer of n resources of the test
// provider (installed from a filesystem mirror, as an operator who mirrors
// providers would), whose real world changes nothing between iterations.
func benchProviderPlan(t *testing.T, bin string, n int) {
	p := providertest.Install(t)
	world := providertest.NewWorld(t)
	stateDir := t.TempDir()
	state := filepath.Join(stateDir, "terraform.tfstate")
	opts := apptest.Options{Workers: 4, Configure: func(c *config.Server) {
		c.Terraform.SandboxPaths.ReadWrite = []string{stateDir, world.Dir}
		c.Terraform.CLIConfig = p.CLIConfig
	}}
	things := make([]providertest.Thing, n)
	for i := range things {
		things[i] = providertest.Thing{Name: fmt.Sprintf("t%04d", i), Value: fmt.Sprint(i)}
	}
	benchLayerPlan(t, bin, fmt.Sprintf("%d world_thing resources of the test provider", n), opts,
		providertest.LayerWithState(world.Dir, state, things[0]), providertest.LayerWithState(world.Dir, state, things...),
		[]string{"TF_CLI_CONFIG_FILE=" + p.CLIConfig})
}

// benchLayerPlan times, in each iteration: a cold plan (a commit adding a
// copy of the layer in a directory of its own, then `/plan` on it: the
// first plan of that layer, its init not reusable, the commit's tarball not
// yet fetched), a warm plan (`/plan` again on the same layer and commit),
// and the hand run.
func benchLayerPlan(t *testing.T, bin, what string, opts apptest.Options, before, layer string, handEnv []string) {
	env := apptest.Start(t, opts)
	repo := env.Repo
	repo.Commit("main", map[string]string{"infra/big/main.tf": before}, "Layer")
	repo.Commit("grow", map[string]string{"infra/big/main.tf": layer}, "Grow")
	pr := repo.OpenPR("grow", "main", "alice")
	// The server's first plan pays for what every later one reuses (the
	// plugin cache, the store's statements): it is not counted.
	plan(t, env, pr, "infra/big")

	var cold, warm, hand []time.Duration
	var coldPhases, warmPhases []breakdown
	for i := 0; i < iterations(); i++ {
		dir := fmt.Sprintf("infra/cold%02d", i)
		pr.Push(map[string]string{dir + "/main.tf": layer}, "Another layer")
		c, cp := plan(t, env, pr, dir)
		w, wp := plan(t, env, pr, dir)
		h := byHand(t, bin, layer, handEnv)
		cold, warm, hand = append(cold, c), append(warm, w), append(hand, h)
		coldPhases, warmPhases = append(coldPhases, cp), append(warmPhases, wp)
		t.Logf("  iteration %d: cold %.3fs (%s), warm %.3fs (%s), by hand %.3fs", i, c.Seconds(), cp, w.Seconds(), wp, h.Seconds())
	}
	report(t, what+", cold", "by hand (init + plan -out)", median(hand), "Strata (comment -> completed check)", median(cold))
	reportPhases(t, coldPhases)
	report(t, what+", warm", "by hand (init + plan -out)", median(hand), "Strata (comment -> completed check)", median(warm))
	reportPhases(t, warmPhases)
}

// plan delivers `/plan dir` on pr and waits for its completed check: how
// long it took, and where the time went.
func plan(t *testing.T, env *apptest.Env, pr *githubtest.PR, dir string) (time.Duration, breakdown) {
	head := pr.HeadSHA()
	payload, event := env.Repo.IssueCommentEvent(pr.Number, "alice", "/plan "+dir)
	seen := lastCheckRun(env, head)
	start := time.Now()
	env.Deliver(payload, event)
	done := waitPlanned(t, env, head, "strata/plan: "+dir, seen)
	b := phasesOf(t, env, start, done)
	b.steps = planSteps(t, env, start)
	return done.Sub(start), b
}

// lastCheckRun is the id of the newest check run on sha.
func lastCheckRun(env *apptest.Env, sha string) int64 {
	var id int64
	for _, cr := range env.Repo.CheckRuns(sha) {
		id = max(id, cr.ID)
	}
	return id
}

// waitPlanned waits for a check run named name, newer than the check run
// after, to complete successfully, and returns when the fake GitHub
// received its completion.
func waitPlanned(t *testing.T, env *apptest.Env, sha, name string, after int64) time.Time {
	t.Helper()
	deadline := time.Now().Add(10 * time.Minute)
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
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("check %s not completed", name)
	return time.Time{}
}

// breakdown is where Strata's time went, from the run records: the wait for
// the event job, the event job (config, layers, files, lock and checks), the
// wait for the plan job, the plan job up to its layer's slot, and from there
// to the completed check (engine, store, check update).
type breakdown struct {
	phases [5]time.Duration
	steps  string // the Terraform commands, from the run's log (planSteps)
}

func (b breakdown) String() string {
	var parts []string
	for i, name := range phaseNames {
		parts = append(parts, fmt.Sprintf("%s %.3fs", name, b.phases[i].Seconds()))
	}
	if b.steps != "" {
		parts = append(parts, b.steps)
	}
	return strings.Join(parts, ", ")
}

var phaseNames = [5]string{"webhook -> event job", "event job", "-> plan job", "plan job -> slot", "slot -> check completed"}

func phasesOf(t *testing.T, env *apptest.Env, start, done time.Time) breakdown {
	t.Helper()
	st := env.Server.Store()
	t0 := start.UnixMilli()
	// A comment's job knows no head commit: the runs are those that
	// started after the delivery (each iteration waits for the last).
	rows, err := st.DB().Query(st.Rebind(`SELECT kind, started_at, finished_at FROM runs WHERE started_at >= ? ORDER BY id`), t0)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var evStart, evEnd, planStart, slot int64
	for rows.Next() {
		var kind string
		var s, f int64
		if err := rows.Scan(&kind, &s, &f); err != nil {
			t.Fatal(err)
		}
		switch kind {
		case "pull_request", "command":
			evStart, evEnd = s, f
		case "layer_plan":
			planStart = s
		}
	}
	// When the plan took its layer's slot, from the server's log.
	for _, span := range env.SlotSpans("layer") {
		if span[0] >= planStart {
			slot = span[0]
		}
	}
	ms := func(a, b int64) time.Duration { return time.Duration(b-a) * time.Millisecond }
	return breakdown{phases: [5]time.Duration{ms(t0, evStart), ms(evStart, evEnd), ms(evEnd, planStart), ms(planStart, slot), ms(slot, done.UnixMilli())}}
}

func reportPhases(t *testing.T, bs []breakdown) {
	var m breakdown
	for i := range phaseNames {
		var ds []time.Duration
		for _, b := range bs {
			ds = append(ds, b.phases[i])
		}
		m.phases[i] = median(ds)
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

// planSteps says how long the Terraform commands of the plan run started
// after start took, from its log ("init skipped" when the layer's init was
// reused); `show -json` runs after the check is completed.
func planSteps(t *testing.T, env *apptest.Env, start time.Time) string {
	st := env.Server.Store()
	var log string
	err := st.DB().QueryRow(st.Rebind(`SELECT `+st.LogSQL()+` FROM runs WHERE kind = 'layer_plan' AND started_at >= ? ORDER BY id DESC LIMIT 1`), start.UnixMilli()).Scan(&log)
	if err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, line := range strings.Split(log, "\n") {
		if rest, ok := strings.CutPrefix(line, "[strata] terraform "); ok && strings.Contains(rest, " took ") {
			steps = append(steps, rest)
		}
		if strings.HasPrefix(line, "[strata] init skipped") {
			steps = append(steps, "init skipped")
		}
	}
	return "terraform: " + strings.Join(steps, ", ")
}

// stepTimes reads from the plan runs' logs how long each Terraform command
// took, on average per command.
func stepTimes(t *testing.T, env *apptest.Env, head string) map[string]time.Duration {
	st := env.Server.Store()
	rows, err := st.DB().Query(st.Rebind(`SELECT `+st.LogSQL()+` FROM runs WHERE kind = 'layer_plan' AND head_sha = ?`), head)
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
			// "[strata] terraform plan -out ... took 850ms" (words.Duration).
			cmd, took, ok := strings.Cut(rest, " took ")
			if d, err := time.ParseDuration(took); ok && err == nil {
				sum[cmd] += d
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
	if err := terraformtest.WriteFixtureLayer(dir, n, state); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "main.tf"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// byHand runs `terraform init` and `terraform plan -out` in a fresh
// directory holding the layer, as someone would on a checkout.
func byHand(t *testing.T, bin, layer string, env []string) time.Duration {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(layer), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for _, args := range [][]string{{"init", "-input=false"}, {"plan", "-input=false", "-out=tfplan"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(append(os.Environ(), "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1"), env...)
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
