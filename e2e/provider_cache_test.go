package e2e

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/terraform/testprovider/providertest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// cacheRounds is how many times the 8 layers are planned at once.
const cacheRounds = 20

// 8 layers that use the provider, planned at once by 8 workers on one
// plugin cache, 20 times in a row -> every init and plan succeeds, no
// "text file busy", and the provider is unpacked into the cache once.
func TestProviderParallelInitsOneCache(t *testing.T) {
	requireTerraform(t)
	data := t.TempDir()
	e := startProviderLayersFrom(t, providertest.InstallPacked(t), apptest.Options{Workers: 8, DataDir: data}, cacheLayers(nil))
	e.planRounds(t, []*providerEnv{e}, data)
}

// The same with two replicas on one PostgreSQL sharing one data dir (one
// host's volume): the init lock is an flock, which excludes the inits of
// both as it does those of one.
func TestProviderParallelInitsTwoReplicas(t *testing.T) {
	requireTerraform(t)
	db, data := storetest.URL(t, store.Postgres), t.TempDir()
	a := startProviderLayersFrom(t, providertest.InstallPacked(t), apptest.Options{Workers: 8, DataDir: data, DatabaseURL: db}, cacheLayers(nil))
	b := a.another(t, apptest.Options{Workers: 8, DataDir: data, DatabaseURL: db, GitHub: a.GitHub})
	a.planRounds(t, []*providerEnv{a, b}, data)

	// Both replicas planned: River names the client of each attempt.
	st, err := store.Open(context.Background(), db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var clients int
	err = st.DB().QueryRow(`SELECT count(DISTINCT attempted_by[array_upper(attempted_by, 1)]) FROM river_job WHERE kind = 'layer_plan'`).Scan(&clients)
	if err != nil || clients != 2 {
		t.Errorf("plans ran on %d replicas (%v), want 2", clients, err)
	}
}

var cacheDirs = func() []string {
	var dirs []string
	for i := range 8 {
		dirs = append(dirs, fmt.Sprintf("infra/l%d", i))
	}
	return dirs
}()

// cacheLayers is the 8 layers, one thing each (value v when not nil).
func cacheLayers(value func(dir string) string) map[string][]providertest.Thing {
	layers := map[string][]providertest.Thing{}
	for i, d := range cacheDirs {
		v := "base"
		if value != nil {
			v = value(d)
		}
		layers[d] = []providertest.Thing{{Name: fmt.Sprintf("t%d", i), Value: v}}
	}
	return layers
}

// planRounds opens a PR changing the 8 layers, then pushes to it
// cacheRounds times, each push delivered to the next server: the 8 plans
// of a round start at once, and each runs init. Then it checks every
// plan, every run log and the plugin cache under data.
func (e *providerEnv) planRounds(t *testing.T, servers []*providerEnv, data string) {
	t.Helper()
	files := func(round int) map[string]string {
		out := map[string]string{}
		for d, things := range cacheLayers(func(d string) string { return "changed-" + filepath.Base(d) }) {
			// A required_version of its own: init reads it, so no init of
			// an earlier round is reused (Strata keeps inits per layer).
			out[d+"/main.tf"] = e.layer(d, things...) + fmt.Sprintf("\nterraform {\n  required_version = \">= 0.%d.0\"\n}\n", round)
		}
		return out
	}
	pr := e.openPR("grow", "alice", files(0))
	cache := filepath.Join(data, "plugin-cache")

	var first fs.FileInfo
	var heads []string
	for round := 1; round <= cacheRounds; round++ {
		head := pr.Push(files(round), fmt.Sprintf("Round %d", round))
		heads = append(heads, head)
		s := servers[round%len(servers)]
		s.Deliver(e.Repo.PullRequestEvent("synchronize", pr.Number))
		e.WaitFor(layersWait, func() bool { return e.completedPlans(head) == len(cacheDirs) })
		// What the round's jobs do after their plans (the PR's comment)
		// ends before the next push, which would cancel it.
		e.WaitIdle(layersWait)
		if round == 1 {
			bins := cachedProviders(t, cache)
			if len(bins) != 1 {
				t.Fatalf("after the first round the cache holds %d providers, want 1: %v", len(bins), bins)
			}
			if first, _ = os.Stat(bins[0]); first == nil {
				t.Fatal("cached provider vanished")
			}
		}
	}
	for _, head := range heads {
		for _, d := range cacheDirs {
			for _, cr := range e.checksNamed(head, "strata/plan: "+d) {
				if cr.Conclusion != "success" || cr.Title != "1 to add, 0 to change, 0 to destroy" {
					t.Errorf("%s: plan %d = %s %q %q", d, cr.ID, cr.Conclusion, cr.Title, cr.Summary)
				}
			}
		}
	}
	e.WaitIdle(layersWait)

	// The first attempt of each plan: one that a later step of its job
	// (not init, not plan) made retry finds its init kept, and skips it.
	logs := firstAttemptLogs(t, e.Server.Store())
	if len(logs) != cacheRounds*len(cacheDirs) {
		t.Errorf("%d plan runs, want %d", len(logs), cacheRounds*len(cacheDirs))
	}
	installed := 0
	for _, log := range logs {
		if strings.Contains(log, "text file busy") || strings.Contains(log, "Error") {
			t.Errorf("a plan's log holds an error:\n%s", log)
		}
		if !strings.Contains(log, "$ terraform init") {
			t.Errorf("a plan did not init:\n%s", log)
		}
		installed += strings.Count(log, "- Installing "+providertest.Source)
	}
	// Terraform says "Installing" when it unpacks into the cache, "Using
	// ... from the shared cache directory" when the cache has it.
	if installed != 1 {
		t.Errorf("the provider was installed %d times, want once", installed)
	}
	bins := cachedProviders(t, cache)
	if len(bins) != 1 {
		t.Fatalf("the cache holds %d providers, want 1: %v", len(bins), bins)
	}
	last, err := os.Stat(bins[0])
	if err != nil || !os.SameFile(first, last) || !last.ModTime().Equal(first.ModTime()) {
		t.Errorf("the cached provider was replaced after the first round (%v)", err)
	}
	// The rounds did plan at once: runs of different layers overlapped.
	var envs []*apptest.Env
	for _, s := range servers {
		envs = append(envs, s.Env)
	}
	if n := maxOverlap(slotSpans("layer", envs...)); n < 2 {
		t.Errorf("at most %d plans ran at once; the test proves nothing", n)
	} else {
		t.Logf("up to %d plans ran at once", n)
	}
	noViolations(t, e.GitHub)
}

// completedPlans counts the completed plan checks of the 8 layers on sha.
func (e *providerEnv) completedPlans(sha string) int {
	n := 0
	for _, cr := range e.Repo.CheckRuns(sha) {
		if strings.HasPrefix(cr.Name, "strata/plan: infra/l") && cr.Status == "completed" {
			n++
		}
	}
	return n
}

// cachedProviders lists the provider binaries unpacked in the plugin cache.
func cachedProviders(t *testing.T, cache string) []string {
	t.Helper()
	var bins []string
	err := filepath.WalkDir(cache, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasPrefix(d.Name(), "terraform-provider-") {
			bins = append(bins, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return bins
}

// maxOverlap is the most spans that were open at one time.
func maxOverlap(spans [][2]int64) int {
	best := 0
	for _, s := range spans {
		n := 0
		for _, o := range spans {
			if o[0] <= s[0] && s[0] < o[1] {
				n++
			}
		}
		best = max(best, n)
	}
	return best
}

func firstAttemptLogs(t *testing.T, st *store.Store) []string {
	t.Helper()
	return logsWhere(t, st, `SELECT id FROM runs WHERE kind = 'layer_plan' AND attempt = 1 ORDER BY id`)
}
