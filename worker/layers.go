package worker

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/google/go-github/v60/github"
	"github.com/riverqueue/river"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/source"
)

// The path of a /plan, in the order the data flows:
//   layers_plan.go    /plan and autoplan take locks, create checks, enqueue
//   layers_run.go     a plan job: slot, tree, engine, store
//   layers_report.go  checks, the gathered comment, strata/applied
//   layers_apply.go   /apply: permission, requirements, dependencies
//   layers_apply_run.go  the apply job, and its report when interrupted
//   layers_lock.go    lock checks, /unlock, release on close, repair
//   layers_events.go  autoplan and close on pull_request events

var registerLayersOnce sync.Once

// registerLayers adds the workers, commands and event reactions of
// Terraform layers: /plan, /apply, /unlock, locks and autoplan (issue 3).
func registerLayers(w *river.Workers, d *Deps) {
	river.AddWorker(w, &layerPlanWorker{d: d})
	river.AddWorker(w, &layerApplyWorker{d: d})
	river.AddWorker(w, &lockRepairWorker{d: d})
	// The tables below are process-wide; tests run several servers.
	registerLayersOnce.Do(func() {
		HandleCommand("plan", planCommand)
		HandleCommand("apply", applyCommand)
		HandleCommand("unlock", unlockCommand)
		OnPullRequest(layersOnPullRequest)
		HandleInterrupted(jobs.LayerApply{}.Kind(), applyInterrupted)
		Policies[jobs.LayerApply{}.Kind()] = queue.Policy{Recovery: queue.Interrupt}
		PeriodicJobs = append(PeriodicJobs, lockRepairPeriodic())
	})
}

// repoLayers are the layers of a repository at a commit: those of
// .strata.yaml, or without the file, every directory with Terraform files
// that is not only a module of another, with defaults.
func repoLayers(ctx context.Context, d *Deps, gh *github.Client, repo jobs.Repo, sha string, cfg *RepoConfig) ([]config.Layer, error) {
	if cfg != nil && cfg.Present {
		return cfg.Layers, nil
	}
	root, release, err := d.Fetcher.Fetch(ctx, source.GitHub{Client: gh}, repo.Owner, repo.Name, sha)
	if err != nil {
		return nil, err
	}
	defer release()
	dirs, err := terraform.Discover(root)
	if err != nil {
		return nil, fmt.Errorf("discover layers of %s@%s: %w", repo.FullName, sha, err)
	}
	return DiscoveredLayers(dirs), nil
}

// DiscoveredLayers gives discovered layer directories the defaults of a
// layer in .strata.yaml that only sets its dir.
func DiscoveredLayers(dirs []string) []config.Layer {
	out := make([]config.Layer, 0, len(dirs))
	for _, dir := range dirs {
		out = append(out, config.Layer{
			Name:      dir,
			Dir:       dir,
			Workspace: config.DefaultWorkspace,
			Autoplan:  config.Autoplan{Enabled: true, WhenModified: append([]string(nil), config.DefaultWhenModified...)},
		})
	}
	return out
}

// pickLayers returns the layers named (by name or dir), or an error naming
// those that are not layers of the repo.
func pickLayers(all []config.Layer, names []string) ([]config.Layer, error) {
	var out []config.Layer
	var unknown []string
	seen := map[string]bool{}
	for _, n := range names {
		found := false
		for _, l := range all {
			if l.Name == n || l.Dir == n {
				found = true
				if !seen[l.Name] {
					seen[l.Name] = true
					out = append(out, l)
				}
			}
		}
		if !found {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		var known []string
		for _, l := range all {
			known = append(known, l.Name)
		}
		return nil, fmt.Errorf("no layer %s in this repository; its layers are: %s",
			"`"+strings.Join(unknown, "`, `")+"`", orNone(known))
	}
	return out, nil
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "none"
	}
	return "`" + strings.Join(names, "`, `") + "`"
}

// touchedLayers are the layers whose when_modified globs match a changed
// file; autoplan only keeps those with autoplan enabled.
func touchedLayers(all []config.Layer, files []string, autoplan bool) []config.Layer {
	var out []config.Layer
	for _, l := range all {
		if autoplan && !l.Autoplan.Enabled {
			continue
		}
		for _, f := range files {
			if l.Matches(f) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

// changedFiles lists a PR's files through the PR files API, every page.
func changedFiles(ctx context.Context, gh *github.Client, repo jobs.Repo, pr int) ([]string, error) {
	opts := &github.ListOptions{PerPage: 100}
	var out []string
	for {
		files, resp, err := gh.PullRequests.ListFiles(ctx, repo.Owner, repo.Name, pr, opts)
		if err != nil {
			return nil, fmt.Errorf("list files of %s#%d: %w", repo.FullName, pr, err)
		}
		for _, f := range files {
			out = append(out, f.GetFilename())
			if prev := f.GetPreviousFilename(); prev != "" {
				out = append(out, prev) // a rename touches both places
			}
		}
		if resp.NextPage == 0 {
			return out, nil
		}
		opts.Page = resp.NextPage
	}
}

func specOf(l config.Layer) jobs.LayerSpec {
	return jobs.LayerSpec{Name: l.Name, Dir: l.Dir, Workspace: l.Workspace, VarFiles: l.VarFiles, DependsOn: l.DependsOn}
}

// dependencyOrder sorts layers so that each comes after the layers it
// depends on (among those given); ties keep config order.
func dependencyOrder(layers []config.Layer) ([]config.Layer, error) {
	index := map[string]int{}
	for i, l := range layers {
		index[l.Name] = i
	}
	state := make([]int, len(layers)) // 0 new, 1 visiting, 2 done
	var out []config.Layer
	var visit func(i int) error
	visit = func(i int) error {
		switch state[i] {
		case 1:
			return fmt.Errorf("layers depend on each other in a cycle through `%s`", layers[i].Name)
		case 2:
			return nil
		}
		state[i] = 1
		deps := append([]string(nil), layers[i].DependsOn...)
		sort.Strings(deps)
		for _, dep := range deps {
			if j, ok := index[dep]; ok {
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		state[i] = 2
		out = append(out, layers[i])
		return nil
	}
	for i := range layers {
		if err := visit(i); err != nil {
			return nil, err
		}
	}
	return out, nil
}
