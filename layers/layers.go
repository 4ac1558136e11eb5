package layers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/riverqueue/river"

	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/worker"
)

// Package layers is the Terraform layers capability: /plan, /apply and
// /unlock, the lock per layer held as a check, autoplan on PR events, and
// the report of an apply a crash cut short.
//
// The path of a /plan, in the order the data flows:
//
//	plan.go       /plan and autoplan take locks, create checks, enqueue
//	run.go        a plan job: slot, tree, engine, store
//	report.go     checks, the gathered comment, strata/applied
//	apply.go      /apply: permission, requirements, dependencies
//	apply_run.go  the apply job, and its report when interrupted
//	merge.go      auto_apply: on_merge: reviewed changes kept, a merge's applies started
//	merge_run.go  the post-merge apply job: merge order, plan, compare, apply
//	merge_group.go  the merge queue: strata/applied on a group's head
//	lock.go       lock checks, /unlock, release on close, repair
//	lock_mode.go  lock: on_plan|on_apply: who takes the lock, stale plans
//	events.go     autoplan and close on pull_request events
//	drift.go      drift detection: the default branch planned on a schedule
//	decide.go     the decisions, as pure functions of facts
//	decide_lock.go  those of the lock modes and of stale plans

// New returns the layers capability, for the runtime.
func New(d *worker.Deps) worker.Feature {
	return worker.Feature{
		Name: "layers",
		Commands: map[string]worker.Command{
			"plan": {Run: func(ctx context.Context, c *worker.CommandContext, cmd command.Command) error {
				return planCommand(ctx, d, c, cmd)
			}},
			"apply": {
				Run: func(ctx context.Context, c *worker.CommandContext, cmd command.Command) error {
					return applyCommand(ctx, d, c, cmd)
				},
				Refuse: func(ctx context.Context, c *worker.CommandContext, cmd command.Command, reason string) error {
					return applyRefused(ctx, d, c, cmd, reason)
				},
			},
			"unlock": {Run: func(ctx context.Context, c *worker.CommandContext, cmd command.Command) error {
				return unlockCommand(ctx, d, c, cmd)
			}},
			"cancel": {Run: func(ctx context.Context, c *worker.CommandContext, cmd command.Command) error {
				return cancelCommand(ctx, d, c, cmd)
			}},
			"approve-policies": {Run: func(ctx context.Context, c *worker.CommandContext, cmd command.Command) error {
				return approvePoliciesCommand(ctx, d, c, cmd)
			}},
		},
		OnPullRequest: func(ctx context.Context, ev jobs.PullRequest) error { return layersOnPullRequest(ctx, d, ev) },
		Interrupted: map[string]worker.InterruptedFunc{
			jobs.LayerApply{}.Kind():      func(ctx context.Context, job queue.Interrupted) error { return applyInterrupted(ctx, d, job) },
			jobs.LayerMergeApply{}.Kind(): func(ctx context.Context, job queue.Interrupted) error { return mergeApplyInterrupted(ctx, d, job) },
		},
		OnPush:   func(ctx context.Context, ev jobs.Push) error { return driftOnPush(ctx, d, ev) },
		Periodic: []worker.Periodic{lockRepairPeriodic, driftScanPeriodic, driftDiscoverPeriodic},
		AddWorkers: func(w *river.Workers) {
			river.AddWorker(w, &layerPlanWorker{d: d})
			river.AddWorker(w, &layerApplyWorker{d: d})
			river.AddWorker(w, &layerMergeApplyWorker{d: d})
			river.AddWorker(w, &mergeGroupWorker{d: d})
			river.AddWorker(w, &lockRepairWorker{d: d})
			river.AddWorker(w, &driftScanWorker{d: d})
			river.AddWorker(w, &driftRunWorker{d: d})
			river.AddWorker(w, &driftDiscoverWorker{d: d})
		},
	}
}

// repoLayers are the layers of a repository at a commit: those of
// .strata.yaml, or without the file, every directory with Terraform files
// that is not only a module of another, with defaults.
func repoLayers(ctx context.Context, d *worker.Deps, repo jobs.Repo, sha string, cfg *worker.RepoConfig) ([]config.Layer, error) {
	if cfg != nil && cfg.Present {
		return cfg.Layers, nil
	}
	root, release, err := d.Fetch(ctx, repo, sha)
	if err != nil {
		return nil, err
	}
	defer release()
	dirs, err := terraform.Discover(root)
	if err != nil {
		return nil, fmt.Errorf("discover layers of %s@%s: %w", repo.FullName, sha, err)
	}
	for _, dir := range dirs {
		if err := discoveredNameProblem(dir); err != nil {
			worker.Warn(ctx, fmt.Errorf("%s@%s: %w", repo.FullName, sha, err), "discover layers")
		}
	}
	return DiscoveredLayers(dirs), nil
}

// DiscoveredLayers gives discovered layer directories the defaults of a
// layer in .strata.yaml that only sets its dir. A directory whose path
// cannot be a layer name is not a layer (discoveredNameProblem).
func DiscoveredLayers(dirs []string) []config.Layer {
	out := make([]config.Layer, 0, len(dirs))
	for _, dir := range dirs {
		if discoveredNameProblem(dir) != nil {
			continue
		}
		out = append(out, config.Layer{
			Name:      dir,
			Dir:       dir,
			Workspace: config.DefaultWorkspace,
			Autoplan:  config.Autoplan{Enabled: true, WhenModified: append([]string(nil), config.DefaultWhenModified...)},
		})
	}
	return out
}

// discoveredNameProblem says why a discovered directory cannot be a layer.
// Its path becomes the layer's name, which check names, comments and
// commands carry: it must be a name .strata.yaml accepts (letters, digits
// and "-_./", no space, backtick or newline a PR could forge text with),
// without the "@" that names a workspace. Such a directory can still be a
// layer: .strata.yaml gives it a name.
func discoveredNameProblem(dir string) error {
	err := command.CheckName(dir)
	if err == nil && strings.Contains(dir, "@") {
		err = errors.New("`@` names a workspace")
	}
	if err != nil {
		return fmt.Errorf("directory %q holds Terraform files but is not a layer: its path is not a valid layer name (%v); "+
			"give it a name in %s", dir, err, config.RepoFile)
	}
	return nil
}

// pickLayers returns the layers named (by name or dir), or an error naming
// those that are not layers of the repo.
func pickLayers(all []config.Layer, names []string) ([]config.Layer, error) {
	return worker.Pick(all, names, func(l config.Layer, n string) bool { return l.Name == n || l.Dir == n },
		func(l config.Layer) string { return l.Name }, "layer", "layers")
}

// touchedLayers are the layers whose when_modified globs match a changed
// file, or, for a layer with the default globs, whose local modules hold a
// changed Terraform file; autoplan only keeps those with autoplan enabled.
func touchedLayers(all []config.Layer, files []string, modules layerModules, autoplan bool) []config.Layer {
	var out []config.Layer
	for _, l := range all {
		if autoplan && !l.Autoplan.Enabled {
			continue
		}
		for _, f := range files {
			if l.Matches(f) || modules.touch(l, f) {
				out = append(out, l)
				break
			}
		}
	}
	return out
}

func specOf(l config.Layer) jobs.LayerSpec {
	return jobs.LayerSpec{Name: l.Name, Dir: l.Dir, Workspace: l.Workspace, VarFiles: l.VarFiles, DependsOn: l.DependsOn, Engine: l.Engine,
		LockOnApply: l.LocksOnApply(), State: string(l.State), CodeOwners: slices.Contains(l.ApplyRequirements, config.CodeOwners),
		OnMerge: l.AppliesOnMerge()}
}
