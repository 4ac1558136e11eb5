package worker

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/riverqueue/river"

	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/report"
)

// The path of a /helm-test, in the order the data flows:
//   releases.go          /helm-test: names, permission, cluster, checks, enqueue
//   releases_cluster.go  how a run reaches a cluster (HelmClusters)
//   releases_run.go      a test job: slot, tree, engine, check; interrupted runs
//   releases_report.go   the `strata/helm-test: RELEASE` check
//   releases_cleanup.go  uninstall on close or merge

var registerReleasesOnce sync.Once

// registerReleases adds the workers, commands and event reactions of
// Helm releases: /helm-test and cleanup (issue 5).
func registerReleases(w *river.Workers, d *Deps) {
	river.AddWorker(w, &releaseTestWorker{d: d})
	river.AddWorker(w, &releaseCleanupWorker{d: d})
	// The tables below are process-wide; tests run several servers.
	registerReleasesOnce.Do(func() {
		HandleCommand("helm-test", helmTestCommand)
		OnPullRequest(releasesOnPullRequest)
		HandleInterrupted(jobs.ReleaseTest{}.Kind(), releaseTestInterrupted)
		Policies[jobs.ReleaseTest{}.Kind()] = queue.Policy{Recovery: queue.Interrupt}
	})
}

func helmTestCheckName(release string) string { return "strata/helm-test: " + release }

// helmTestActions are the buttons of a helm-test check.
var helmTestActions = []report.Action{
	{Label: "Re-run", Description: "Upgrade and test this release again", Identifier: "helm-test"},
}

// helmTestCommand answers /helm-test [RELEASE...] [--filter NAME]...: it
// checks the names, who asks, and where each release would be installed,
// then creates a queued check and enqueues one run per release.
func helmTestCommand(ctx context.Context, c *CommandContext, cmd command.Command) error {
	a, d := c.Job, c.Deps
	ht := cmd.(command.HelmTest)
	head := c.PR.GetHead().GetSHA()
	if c.PR.GetState() != "open" {
		return c.Reply(ctx, fmt.Sprintf("@%s this pull request is closed; nothing to test.", a.User))
	}
	if len(c.Config.Releases) == 0 {
		return c.Reply(ctx, fmt.Sprintf("@%s this repository defines no releases in `%s`; nothing to test.", a.User, config.RepoFile))
	}
	releases, err := pickReleases(c.Config.Releases, ht.Releases)
	if err != nil {
		return c.Reply(ctx, fmt.Sprintf("@%s %v", a.User, err))
	}
	refuse := func(rel config.Release, title, reason string) error {
		_, err := c.Reporter.CreateCheck(ctx, report.Check{Name: helmTestCheckName(rel.Name), HeadSHA: head, Conclusion: "failure",
			ExternalID: externalID(a.PR), Title: title, Summary: reason, Actions: helmTestActions})
		return err
	}

	if ok, perm, err := hasPermission(ctx, c.GitHub, a.Repo, a.User, d.Config.ApplyPermission); err != nil {
		return err
	} else if !ok {
		least := d.Config.ApplyPermission
		if least == "" {
			least = "write"
		}
		reason := fmt.Sprintf("@%s has %s permission on this repository; `/helm-test` needs %s or higher.", a.User, perm, least)
		for _, rel := range releases {
			if err := refuse(rel, "Helm test refused", reason); err != nil {
				return err
			}
		}
		return c.Reply(ctx, fmt.Sprintf("@%s `/helm-test` refused: %s", a.User, reason))
	}

	base, err := readRepoConfig(ctx, c.GitHub, a.Owner, a.Name, c.PR.GetBase().GetRepo().GetDefaultBranch())
	if err != nil {
		return err
	}
	var refusals []string
	for _, rel := range releases {
		spec, why := releaseSpec(d.Config, base, rel, a.PR, ht.Filters)
		if why != "" {
			refusals = append(refusals, fmt.Sprintf("- `%s`: %s", rel.Name, why))
			if err := refuse(rel, "Helm test refused", why); err != nil {
				return err
			}
			continue
		}
		id, err := c.Reporter.CreateCheck(ctx, report.Check{Name: helmTestCheckName(rel.Name), HeadSHA: head, Status: "queued",
			ExternalID: externalID(a.PR), Title: "Waiting to test",
			Summary: fmt.Sprintf("Helm test of `%s` (release `%s` in cluster `%s`, namespace `%s`) requested by @%s, waiting for a worker.",
				rel.Name, spec.ReleaseName, spec.Cluster, spec.Namespace, a.User)})
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
			"request defines. Merge its definition in `%s` first.", config.RepoFile)
	}
	cluster, ok := srv.Cluster(rel.Cluster)
	if !ok {
		return jobs.ReleaseSpec{}, fmt.Sprintf("it names cluster %s, which this Strata server does not define; its clusters are: %s. "+
			"Clusters come only from the server's config.", clusterName(rel.Cluster), orNone(clusterNames(srv)))
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
	return "`" + name + "`"
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
	var out []config.Release
	var unknown []string
	seen := map[string]bool{}
	for _, n := range names {
		found := false
		for _, r := range all {
			if r.Name == n {
				found = true
				if !seen[n] {
					seen[n] = true
					out = append(out, r)
				}
			}
		}
		if !found {
			unknown = append(unknown, n)
		}
	}
	if len(unknown) > 0 {
		var known []string
		for _, r := range all {
			known = append(known, r.Name)
		}
		return nil, fmt.Errorf("no release %s in this repository; its releases are: %s",
			"`"+strings.Join(unknown, "`, `")+"`", orNone(known))
	}
	return out, nil
}
