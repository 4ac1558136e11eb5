package releases

import (
	"context"
	"fmt"
	"strings"

	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/report"
	"strata.dev/strata/worker"
)

// Package releases is the Helm releases capability: /helm-test installs or
// upgrades a release from the PR's chart and runs its Helm tests, reporting
// every hook with its logs; a closed PR's releases are cleaned up.
//
// The path of a /helm-test, in the order the data flows:
//
//	releases.go  /helm-test: names, cluster, checks, enqueue
//	cluster.go   how a run reaches a cluster (Clusters)
//	run.go       a test job: slot, tree, engine, check; interrupted runs
//	report.go    the `strata/helm-test: RELEASE` check
//	cleanup.go   uninstall on close or merge

// New returns the releases capability, for the runtime; runs reach their
// clusters through clusters (KubeClusters when nil).
func New(d *worker.Deps, clusters Clusters) worker.Feature {
	if clusters == nil {
		clusters = KubeClusters{}
	}
	return worker.Feature{
		Name: "releases",
		Commands: map[string]worker.Command{
			"helm-test": {
				Run: func(ctx context.Context, c *worker.CommandContext, cmd command.Command) error {
					return helmTestCommand(ctx, d, c, cmd)
				},
				Refuse: func(ctx context.Context, c *worker.CommandContext, cmd command.Command, reason string) error {
					return helmTestRefused(ctx, c, cmd, reason)
				},
			},
		},
		OnPullRequest: func(ctx context.Context, ev jobs.PullRequest) error { return releasesOnPullRequest(ctx, d, ev) },
		Interrupted: map[string]worker.InterruptedFunc{
			jobs.ReleaseTest{}.Kind(): func(ctx context.Context, job queue.Interrupted) error { return releaseTestInterrupted(ctx, d, job) },
		},
		AddWorkers: func(w *river.Workers) {
			river.AddWorker(w, &releaseTestWorker{d: d, clusters: clusters})
			river.AddWorker(w, &releaseCleanupWorker{d: d, clusters: clusters})
		},
	}
}

// helmTestActions are the buttons of a helm-test check.
var helmTestActions = []report.Action{
	{Label: "Re-run", Description: "Upgrade and test this release again", Identifier: checks.ButtonHelmTest},
}

// helmTestCommand answers /helm-test [RELEASE...] [--filter NAME]...: it
// checks the names, who asks, and where each release would be installed,
// then creates a queued check and enqueues one run per release.
func helmTestCommand(ctx context.Context, d *worker.Deps, c *worker.CommandContext, cmd command.Command) error {
	a := c.Job
	ht := cmd.(command.HelmTest)
	head := c.PR.HeadSHA()
	if !c.PR.Open() {
		return c.Reply(ctx, fmt.Sprintf("@%s this pull request is closed; nothing to test.", a.User))
	}
	if len(c.Config.Releases) == 0 {
		return c.Reply(ctx, fmt.Sprintf("@%s this repository defines no releases in %s; nothing to test.", a.User, markdown.Quote(config.RepoFile)))
	}
	releases, err := pickReleases(c.Config.Releases, ht.Releases)
	if err != nil {
		return c.Reply(ctx, fmt.Sprintf("@%s %v", a.User, err))
	}
	base, err := worker.ReadRepoConfig(ctx, c.PR, c.PR.DefaultBranch())
	if err != nil {
		return err
	}
	var refusals []string
	for _, rel := range releases {
		spec, why := releaseSpec(d.Config, base, rel, a.PR, ht.Filters)
		if why != "" {
			refusals = append(refusals, fmt.Sprintf("- %s: %s", markdown.Quote(rel.Name), why))
			if err := refuseRelease(ctx, c, rel.Name, why); err != nil {
				return err
			}
			continue
		}
		id, err := c.Reporter.CreateCheck(ctx, report.Check{Name: checks.HelmTest(rel.Name), HeadSHA: head, Status: "queued",
			ExternalID: checks.ExternalID(a.PR), Title: "Waiting to test",
			Summary: fmt.Sprintf("Helm test of %s (release %s in cluster %s, namespace %s) requested by @%s, waiting for a worker.",
				markdown.Quote(rel.Name), markdown.Quote(spec.ReleaseName), markdown.Quote(spec.Cluster), markdown.Quote(spec.Namespace), a.User)})
		if err != nil {
			return err
		}
		job := jobs.ReleaseTest{Repo: a.Repo, PR: a.PR, Target: rel.Name, HeadSHA: head, User: a.User, Release: spec, CheckRunID: id}
		if _, err := d.Queue.Enqueue(ctx, job, nil); err != nil {
			return err
		}
	}
	if len(refusals) > 0 {
		return c.Reply(ctx, fmt.Sprintf("@%s Strata will not test:\n\n%s", a.User, strings.Join(refusals, "\n")))
	}
	return nil
}

// refuseRelease fails the release's check with the reason.
func refuseRelease(ctx context.Context, c *worker.CommandContext, name, reason string) error {
	_, err := c.Reporter.CreateCheck(ctx, report.Check{Name: checks.HelmTest(name), HeadSHA: c.PR.HeadSHA(), Conclusion: "failure",
		ExternalID: checks.ExternalID(c.Job.PR), Title: "Helm test refused", Summary: reason, Actions: helmTestActions})
	return err
}

// helmTestRefused reports a /helm-test the permission table refused, on the
// checks of the releases it names (or all of the repo's).
func helmTestRefused(ctx context.Context, c *worker.CommandContext, cmd command.Command, reason string) error {
	releases, _ := pickReleases(c.Config.Releases, cmd.(command.HelmTest).Releases)
	for _, rel := range releases {
		if err := refuseRelease(ctx, c, rel.Name, reason); err != nil {
			return err
		}
	}
	return c.Reply(ctx, fmt.Sprintf("@%s `/helm-test` refused: %s", c.Job.User, reason))
}

// releaseSpec fixes what a run of rel does, or says why it must not run.
//
// Where a release is installed (cluster, namespace, release_name) is policy:
// it comes from the default branch (config.Effective). A release that only
// the PR defines has no such policy, so it is refused rather than installed
// wherever the PR says; its definition must be merged first.
func releaseSpec(srv *config.Server, base *config.Repo, rel config.Release, pr int, filters []string) (jobs.ReleaseSpec, string) {
	if !definedIn(base, rel.Name) {
		return jobs.ReleaseSpec{}, fmt.Sprintf("this release is not on the default branch. The default branch decides where a release "+
			"is installed (`cluster`, `namespace`, `release_name`), so Strata does not install a release that only a pull "+
			"request defines. Merge its definition in %s first.", markdown.Quote(config.RepoFile))
	}
	cluster, ok := srv.Cluster(rel.Cluster)
	if !ok {
		return jobs.ReleaseSpec{}, fmt.Sprintf("it names cluster %s, which this Strata server does not define; its clusters are: %s. "+
			"Clusters come only from the server's config.", clusterName(rel.Cluster), report.Names(clusterNames(srv)))
	}
	if len(filters) == 0 {
		filters = rel.Test.Filters
	}
	return jobs.ReleaseSpec{
		Name: rel.Name, Chart: rel.Chart, ReleaseName: rel.ReleaseNameFor(pr), Namespace: rel.Namespace,
		Values: rel.Values, Cluster: cluster.Name, Timeout: rel.Test.Timeout, Filters: filters,
		Remediation: string(rel.Remediation),
	}, ""
}

func definedIn(base *config.Repo, name string) bool {
	if base == nil {
		return false
	}
	for _, r := range base.Releases {
		if r.Name == name {
			return true
		}
	}
	return false
}

func clusterName(name string) string {
	if name == "" {
		return "(the default)"
	}
	return markdown.Quote(name)
}

func clusterNames(srv *config.Server) []string {
	var names []string
	for _, c := range srv.Clusters {
		names = append(names, c.Name)
	}
	return names
}

// pickReleases returns the releases named, all when none is, or an error
// naming those that are not releases of the repo.
func pickReleases(all []config.Release, names []string) ([]config.Release, error) {
	if len(names) == 0 {
		return all, nil
	}
	return worker.Pick(all, names, func(r config.Release, n string) bool { return r.Name == n },
		func(r config.Release) string { return r.Name }, "release", "releases")
}
