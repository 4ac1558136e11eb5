package releases

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/riverqueue/river"
	"helm.sh/helm/v3/pkg/storage/driver"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/helm"
	"strata.dev/strata/jobs"
	"strata.dev/strata/worker"
)

// releasesOnPullRequest enqueues the uninstall of the PR's releases with
// cleanup_on_close when the PR is closed or merged. Enqueueing twice is
// harmless: an absent release is left alone.
//
// Only releases the default branch defines are cleaned up, with the
// cluster, namespace and release_name it gives them (as /helm-test installs
// them): a PR cannot name another release to be uninstalled when it closes.
func releasesOnPullRequest(ctx context.Context, d *worker.Deps, ev jobs.PullRequest) error {
	if ev.Action != "closed" {
		return nil
	}
	repo, err := d.Repo(ev.Repo)
	if err != nil {
		return err
	}
	base, err := worker.ReadRepoConfig(ctx, repo, ev.DefaultBranch)
	var bad config.RepoErrors
	if errors.As(err, &bad) || base == nil {
		return nil // nothing /helm-test could have installed
	}
	if err != nil {
		return err
	}
	for _, spec := range cleanupTargets(d.Config, base, ev.PR) {
		job := jobs.ReleaseCleanup{Repo: ev.Repo, PR: ev.PR, Target: spec.Name, HeadSHA: ev.HeadSHA, Merged: ev.Merged, Release: spec}
		if _, err := d.Queue.Enqueue(ctx, job, nil); err != nil {
			return fmt.Errorf("cleanup of %s for %s#%d: %w", spec.Name, ev.FullName, ev.PR, err)
		}
	}
	return nil
}

// cleanupTargets decides which releases a closed PR's cleanup uninstalls:
// those with cleanup_on_close that the default branch defines, where it
// installs them for this PR. The PR's own file has no say: not where a
// release is, not whether it is cleaned up, not whether it is there at all.
func cleanupTargets(srv *config.Server, base *config.Repo, pr int) []jobs.ReleaseSpec {
	var out []jobs.ReleaseSpec
	for _, rel := range base.Releases {
		if !rel.CleanupOnClose {
			continue
		}
		if spec, why := releaseSpec(srv, base, rel, pr, nil); why == "" {
			out = append(out, spec)
		}
	}
	return out
}

// releaseCleanupWorker uninstalls one release of a closed PR, after any
// running test of it, and says so on the PR.
type releaseCleanupWorker struct {
	river.WorkerDefaults[jobs.ReleaseCleanup]
	d        *worker.Deps
	clusters Clusters
}

func (w *releaseCleanupWorker) Timeout(job *river.Job[jobs.ReleaseCleanup]) time.Duration {
	return job.Args.Timeout()
}

// Work is the job in three steps: uninstall gathers what the cleanup
// found (holding the release's slot, so that no test of it runs
// meanwhile), cleanupOutcomeOf decides what the PR is told and the queue
// hears, and Work does it once.
func (w *releaseCleanupWorker) Work(ctx context.Context, job *river.Job[jobs.ReleaseCleanup]) error {
	a, d := job.Args, w.d
	cluster, ok := d.Config.Cluster(a.Release.Cluster)
	if !ok {
		d.Logger.Warn().Str("cluster", a.Release.Cluster).Str("release", a.Release.ReleaseName).Msg("cluster gone from the server config; release not cleaned up")
		return nil
	}
	free, err := waitReleaseSlot(ctx, d.Store, releaseKey(a.Release), worker.RunID(ctx))
	if err != nil {
		return err
	}
	defer free()
	found, err := w.uninstall(ctx, cluster, a)
	if err != nil {
		return err
	}
	out := cleanupOutcomeOf(a, cluster.Name, found, job.Attempt, job.MaxAttempts)
	if out.Comment != "" {
		rep, err := d.Reporter(a.Repo)
		if err != nil {
			return err
		}
		if _, err := rep.Comment(ctx, a.PR, out.Comment); err != nil {
			return err
		}
	}
	return out.Err
}

// uninstall gathers what a cleanup finds, up to the first fact that ends
// it, uninstalling the release when it is this PR's alone. An error is the
// cluster's: nothing was decided.
func (w *releaseCleanupWorker) uninstall(ctx context.Context, cluster config.Cluster, a jobs.ReleaseCleanup) (cleanupRun, error) {
	cfg, _, err := w.clusters.Connect(ctx, cluster, a.Release.Namespace)
	if err != nil {
		return cleanupRun{}, err
	}
	history, err := cfg.Releases.History(a.Release.ReleaseName)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return cleanupRun{Absent: true}, nil
	} else if err != nil {
		return cleanupRun{}, fmt.Errorf("release %s in cluster %s: %w", a.Release.ReleaseName, cluster.Name, err)
	}
	if !installedOnlyBy(history, a.FullName, a.PR) {
		return cleanupRun{Foreign: true}, nil
	}
	timeout := a.Release.Timeout
	if timeout <= 0 {
		timeout = helm.DefaultTimeout
	}
	uctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return cleanupRun{Err: helm.Uninstall(uctx, cfg, a.Release.ReleaseName)}, nil
}
