package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/riverqueue/river"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
)

// The path of a hydration, in the order the data flows:
//   syncs_events.go    pushes to the default branch and PR events fan out
//   syncs_hydrate.go   a hydration job: tree, engine, commit, store, check
//   syncs_git.go       one commit through the Git Data API, compare-and-swap
//   syncs_preview.go   the diff of a PR's head against its base
//   syncs_takeover.go  /takeover, /release, the takeover job and its expiry
//   syncs_repin.go     the periodic job that follows moved image tags and
//                      sweeps the takeover endings left unfinished

var registerSyncsOnce sync.Once

// repinInterval is how often the moved-tag job runs; the server config sets
// it each time a server registers (the periodic job itself is process-wide).
var repinInterval atomic.Int64

// registerSyncs adds the workers, commands and event reactions of
// Manifest hydration: pushes, previews, /takeover and /release (issue 4).
func registerSyncs(w *river.Workers, d *Deps) {
	river.AddWorker(w, &syncHydrateWorker{d: d})
	river.AddWorker(w, &syncPreviewWorker{d: d})
	river.AddWorker(w, &syncTakeoverWorker{d: d})
	river.AddWorker(w, &takeoverExpiryWorker{d: d})
	river.AddWorker(w, &syncRepinWorker{d: d})
	if d.Config != nil && d.Config.RepinInterval > 0 {
		repinInterval.Store(int64(d.Config.RepinInterval))
	}
	// The tables below are process-wide; tests run several servers.
	registerSyncsOnce.Do(func() {
		HandleCommand("takeover", takeoverCommand)
		HandleCommand("release", releaseCommand)
		OnPush(syncsOnPush)
		OnPullRequest(syncsOnPullRequest)
		HandleInterrupted(jobs.SyncTakeover{}.Kind(), takeoverInterrupted)
		Policies[jobs.SyncTakeover{}.Kind()] = queue.Policy{Recovery: queue.Interrupt}
		PeriodicJobs = append(PeriodicJobs, repinPeriodic())
	})
}

func hydrateCheckName(sync string) string  { return "strata/hydrate: " + sync }
func takeoverCheckName(sync string) string { return "strata/takeover: " + sync }

// syncSpec fixes a sync's config for a job; the destination repository
// defaults to the sync's own.
func syncSpec(repo jobs.Repo, s config.Sync) jobs.SyncSpec {
	spec := jobs.SyncSpec{Name: s.Name, Source: s.Source, DestRepo: s.Dest.Repo, DestBranch: s.Dest.Branch, DestPath: s.Dest.Path}
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

func destOf(s jobs.SyncSpec) destination {
	owner, name, _ := strings.Cut(s.DestRepo, "/")
	return destination{Owner: owner, Repo: name, Branch: s.DestBranch, Path: s.DestPath}
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

// pickSync returns the sync named, or the repo's only sync when name is "".
func pickSync(syncs []config.Sync, name string) (config.Sync, error) {
	var names []string
	for _, s := range syncs {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	switch {
	case len(syncs) == 0:
		return config.Sync{}, fmt.Errorf("this repository has no sync (`syncs` in `%s`)", config.RepoFile)
	case name == "" && len(syncs) == 1:
		return syncs[0], nil
	case name == "":
		return config.Sync{}, fmt.Errorf("this repository has several syncs; name one: %s", orNone(names))
	}
	return config.Sync{}, fmt.Errorf("no sync `%s` in this repository; its syncs are: %s", name, orNone(names))
}

// defaultHead is the commit the default branch points at.
func defaultHead(ctx context.Context, gh *github.Client, repo jobs.Repo, branch string) (string, string, error) {
	if branch == "" {
		r, _, err := gh.Repositories.Get(ctx, repo.Owner, repo.Name)
		if err != nil {
			return "", "", fmt.Errorf("read %s: %w", repo.FullName, err)
		}
		branch = r.GetDefaultBranch()
	}
	ref, _, err := gh.Git.GetRef(ctx, repo.Owner, repo.Name, "heads/"+branch)
	if err != nil {
		return "", "", fmt.Errorf("read the default branch %s of %s: %w", branch, repo.FullName, err)
	}
	return ref.GetObject().GetSHA(), branch, nil
}

func commitURL(d *Deps, fullName, sha string) string {
	return webURL(d) + fullName + "/commit/" + sha
}

func webURL(d *Deps) string {
	web := d.Config.GitHub.WebURL
	if web == "" {
		web = "https://github.com/"
	}
	if !strings.HasSuffix(web, "/") {
		web += "/"
	}
	return web
}

func when(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05 UTC") }
