// Package layers benchmarks Terraform layers end to end (issue 3, item 12):
// the time from webhook delivery to the completed `strata/plan` check,
// against `terraform init` and `terraform plan` run by hand on the same
// directory, and a PR touching 12 layers planned by 4 workers against 1.
//
//	STRATA_BENCH=1 go test ./bench/layers -run TestBenchLayers -v -timeout 30m
//
// Each iteration alternates Strata and the hand run so that both share
// whatever else the machine is doing; the medians are reported.
package layers

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform"
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
		t.Skipf("no terraform at %s", bin)
	}
	for _, n := range []int{2000, 200} {
		t.Run(fmt.Sprintf("plan_%d", n), func(t *testing.T) { benchPlan(t, bin, n) })
	}
	t.Run("12_layers", func(t *testing.T) { benchLayers(t, 12, 200) })
}

// benchPlan: one layer of n resources, autoplanned by Strata after a push
// (webhook delivery to completed check), and planned by hand.
func benchPlan(t *testing.T, bin string, n int) {
	env := apptest.Start(t, apptest.Options{Workers: 4})
	state := filepath.Join(t.TempDir(), "terraform.tfstate")
	layer := layerFile(t, n, state)
	repo := env.Repo
	repo.Commit("main", map[string]string{"infra/big/main.tf": layerFile(t, 1, state)}, "Layer")
	repo.Commit("grow", map[string]string{"infra/big/main.tf": layer}, "Grow")
	pr := repo.OpenPR("grow", "main", "alice")

	var strata, hand []time.Duration
	for i := 0; i < iterations(); i++ {
		// A push to the layer each time: autoplan on synchronize, with a
		// tree Strata has not fetched yet.
		pr.Push(map[string]string{"infra/big/main.tf": fmt.Sprintf("%s\n# iteration %d\n", layer, i)}, "Touch")
		head := pr.HeadSHA()
		payload, event := repo.PullRequestEvent("synchronize", pr.Number)
		start := time.Now()
		env.Deliver(payload, event)
		waitCompleted(t, env, head, []string{"strata/plan: infra/big"})
		strata = append(strata, time.Since(start))

		hand = append(hand, byHand(t, bin, layer))
	}
	report(t, fmt.Sprintf("%d terraform_data resources", n), "by hand (init + plan)", median(hand), "Strata (webhook -> completed check)", median(strata))
}

// benchLayers: a PR touching k layers, planned by 4 workers and by 1.
func benchLayers(t *testing.T, k, n int) {
	run := func(workers int) time.Duration {
		env := apptest.Start(t, apptest.Options{Workers: workers})
		stateDir := t.TempDir()
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
		start := time.Now()
		env.Deliver(payload, event)
		waitCompleted(t, env, pr.HeadSHA(), checks)
		d := time.Since(start)
		env.Stop()
		return d
	}
	var par, seq []time.Duration
	for i := 0; i < max(1, iterations()/2); i++ {
		seq = append(seq, run(1))
		par = append(par, run(4))
	}
	report(t, fmt.Sprintf("PR touching %d layers of %d resources", k, n), "1 worker (one after another)", median(seq), "4 workers", median(par))
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
