// Package syncs is the manifest hydration capability: pushes to the
// default branch hydrate kustomize sources into their destination branch,
// PRs get a preview of the hydrated diff, /takeover and /release lend a
// destination to a PR for a while, and moved image tags rehydrate.
//
// The path of a hydration, in the order the data flows:
//
//	events.go    pushes to the default branch and PR events fan out
//	hydrate.go   a hydration job: tree, engine, commit, store, check
//	preview.go   the diff of a PR's head against its base
//	takeover.go  /takeover, /release, the takeover job and its expiry
//	state.go     a takeover's named state, and the one function acting on it
//	repin.go     the periodic job that follows moved image tags and sweeps
//	             the takeovers left unfinished
//	decide.go    the decisions, as pure functions of PR facts, store rows
//	             and config: which sync a /takeover takes and for how long,
//	             what /release releases, which syncs a push or a PR touches
//
// Commits go through package gitcommit.
package syncs

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/gitcommit"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/worker"
)

// New returns the syncs capability, for the runtime.
func New(d *worker.Deps) worker.Feature {
	every := d.Config.RepinInterval
	if every <= 0 {
		every = defaultRepinInterval
	}
	return worker.Feature{
		Name: "syncs",
		Commands: map[string]worker.Command{
			"takeover": {Run: func(ctx context.Context, c *worker.CommandContext, cmd command.Command) error {
				return takeoverCommand(ctx, d, c, cmd)
			}},
			"release": {Run: func(ctx context.Context, c *worker.CommandContext, cmd command.Command) error {
				return releaseCommand(ctx, d, c, cmd)
			}},
		},
		OnPush:        func(ctx context.Context, ev jobs.Push) error { return syncsOnPush(ctx, d, ev) },
		OnPullRequest: func(ctx context.Context, ev jobs.PullRequest) error { return syncsOnPullRequest(ctx, d, ev) },
		Interrupted: map[string]worker.InterruptedFunc{
			jobs.SyncTakeover{}.Kind(): func(ctx context.Context, job queue.Interrupted) error { return takeoverInterrupted(ctx, d, job) },
		},
		Periodic: []worker.Periodic{repinPeriodic(every)},
		AddWorkers: func(w *river.Workers) {
			river.AddWorker(w, &syncHydrateWorker{d: d})
			river.AddWorker(w, &syncPreviewWorker{d: d})
			river.AddWorker(w, &syncTakeoverWorker{d: d})
			river.AddWorker(w, &takeoverExpiryWorker{d: d})
			river.AddWorker(w, &syncRepinWorker{d: d})
		},
	}
}

// syncSpec fixes a sync's config for a job; the destination repository
// defaults to the sync's own.
func syncSpec(repo jobs.Repo, s config.Sync) jobs.SyncSpec {
	spec := jobs.SyncSpec{Name: s.Name, Source: s.Source, DestRepo: s.Dest.Repo, DestBranch: s.Dest.Branch, DestPath: s.Dest.Path,
		HydrateTo: s.Dest.HydrateTo, CommitMessage: s.Dest.CommitMessage}
	spec.File, spec.Validate = s.File, s.Validate
	if spec.DestRepo == "" {
		spec.DestRepo = repo.FullName
	}
	if spec.DestPath == "" {
		spec.DestPath = "."
	}
	for _, img := range s.Images {
		tag := img.Tag
		if tag == "" {
			tag = config.SourceCommitTag
		}
		spec.Images = append(spec.Images, jobs.SyncImage{Name: img.Name, Tag: tag, Pin: string(img.Pin)})
	}
	return spec
}

func specJSON(s jobs.SyncSpec) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func destOf(s jobs.SyncSpec) gitcommit.Destination {
	owner, name, _ := strings.Cut(s.DestRepo, "/")
	return gitcommit.Destination{Owner: owner, Repo: name, Branch: s.DestBranch, Path: s.DestPath}
}

func imageRules(s jobs.SyncSpec) []hydrate.ImageRule {
	var out []hydrate.ImageRule
	for _, img := range s.Images {
		out = append(out, hydrate.ImageRule{Name: img.Name, Tag: img.Tag, Pin: img.Pin})
	}
	return out
}

// imageResolver resolves tags to digests. Registries on loopback and private
// addresses are reached over plain HTTP, as go-containerregistry does.
var imageResolver hydrate.Resolver = hydrate.NewRegistryResolver()

func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
