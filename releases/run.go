package releases

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/engine/helm"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/words"
	"strata.dev/strata/worker"
)

// releaseTestWorker runs one /helm-test of a release: it waits for the
// release's slot, fetches the PR head, runs the engine and reports the
// check.
type releaseTestWorker struct {
	river.WorkerDefaults[jobs.ReleaseTest]
	d        *worker.Deps
	clusters Clusters
}

func (w *releaseTestWorker) Timeout(job *river.Job[jobs.ReleaseTest]) time.Duration {
	return job.Args.Timeout()
}

func (w *releaseTestWorker) Work(ctx context.Context, job *river.Job[jobs.ReleaseTest]) error {
	a, d := job.Args, w.d
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	runID := worker.RunID(ctx)
	logURL := d.LogURL(runID)
	check := func(c report.Check) error {
		c.Name, c.ExternalID, c.DetailsURL, c.LogURL = checks.HelmTest(a.Target), checks.ExternalID(a.PR), logURL, logURL
		return rep.UpdateCheck(context.WithoutCancel(ctx), a.CheckRunID, c)
	}
	// The slot is held until the check is complete: the next run of the
	// release starts after this one's report.
	free, ran, err := w.run(ctx, a, runID, check)
	defer free()
	if err != nil {
		return err
	}
	out := releaseOutcomeOf(a, ran)
	err = check(out.Check)
	if out.Err != nil {
		worker.Warn(ctx, err, "report the Helm test that did not start")
		return out.Err
	}
	return err
}

// run gathers what a /helm-test run finds: it waits for the release's
// slot (free releases it, whatever run returns), fetches the PR and runs
// the engine, reporting the check in progress on the way. An error is a
// progress report that failed or a lost lease: the run ends without a
// report.
func (w *releaseTestWorker) run(ctx context.Context, a jobs.ReleaseTest, runID int64, check func(report.Check) error) (free func(), _ releaseRun, _ error) {
	d := w.d
	key := releaseKey(a.Release)
	free = func() {}
	if holder, err := d.Store.ReleaseSlotHolder(ctx, key); err == nil && holder != 0 && holder != runID {
		if err := check(report.Check{Status: "in_progress", Title: "Waiting for another run of this release",
			Summary: fmt.Sprintf("Another run is testing release %s in cluster %s; this one starts when it ends.", markdown.Quote(a.Release.ReleaseName), markdown.Quote(a.Release.Cluster))}); err != nil {
			return free, releaseRun{}, err
		}
	}
	held, err := waitReleaseSlot(ctx, d.Store, key, runID)
	if err != nil {
		return free, releaseRun{NotStarted: err}, nil
	}
	free = held

	// A PR closed while this run waited is not installed again.
	pr, err := d.PR(ctx, a.Repo, a.PR)
	if err != nil {
		return free, releaseRun{NotStarted: err}, nil
	}
	if !pr.Open() {
		return free, releaseRun{Closed: true}, nil
	}
	if err := check(report.Check{Status: "in_progress", Title: "Testing",
		Summary: fmt.Sprintf("Installing or upgrading release %s in cluster %s, namespace %s, from the chart at %s, then running its Helm tests.",
			markdown.Quote(a.Release.ReleaseName), markdown.Quote(a.Release.Cluster), markdown.Quote(a.Release.Namespace), a.HeadSHA)}); err != nil {
		return free, releaseRun{}, err
	}

	// The run's page shows the test started; Helm's SDK gives the hooks'
	// logs only once they are done.
	log := d.LogWriter(ctx)
	defer log.Close()
	fmt.Fprint(log, runLogHead(a))
	log.Flush()
	res, err := testRelease(ctx, d, w.clusters, a)
	if err != nil && queue.LeaseLost(ctx) {
		// The replica that claims the run reports it interrupted.
		return free, releaseRun{}, context.Cause(ctx)
	}
	if res != nil {
		res.Redact(d.Redactor.String)
	}
	fmt.Fprint(log, runLog(res, err))
	log.Close()
	return free, releaseRun{Res: res, Err: err}, nil
}

// testRelease runs the engine on the release's chart in the tree at the
// PR head. The fetched tree is shared and Helm only reads it.
func testRelease(ctx context.Context, d *worker.Deps, clusters Clusters, a jobs.ReleaseTest) (*helm.Report, error) {
	cluster, ok := d.Config.Cluster(a.Release.Cluster)
	if !ok {
		return nil, fmt.Errorf("cluster %q is no longer in the server config", a.Release.Cluster)
	}
	root, release, err := d.Fetch(ctx, a.Repo, a.HeadSHA)
	if err != nil {
		return nil, err
	}
	defer release()
	in, err := releaseInput(root, a.Release)
	if err != nil {
		return nil, err
	}
	in.Labels = ownerLabels(a.FullName, a.PR)
	if t, ok := clusters.(childTester); ok {
		return t.TestInChild(ctx, cluster, in)
	}
	cfg, logs, err := clusters.Connect(ctx, cluster, a.Release.Namespace)
	if err != nil {
		return nil, err
	}
	return helm.Test(ctx, cfg, logs, in)
}

// releaseInput resolves the release's repo-relative paths in the tree at
// root; .strata.yaml validation already keeps them inside the repo, and
// the engine reads them only from within root (no symlink out of it).
func releaseInput(root string, r jobs.ReleaseSpec) (helm.Input, error) {
	in := helm.Input{Root: root, ReleaseName: r.ReleaseName, Namespace: r.Namespace, Timeout: r.Timeout, Filters: r.Filters,
		Remediation: helm.Remediation(r.Remediation)}
	var err error
	if in.ChartDir, err = inTree(root, r.Chart); err != nil {
		return in, err
	}
	for _, v := range r.Values {
		p, err := inTree(root, v)
		if err != nil {
			return in, err
		}
		in.ValuesFiles = append(in.ValuesFiles, p)
	}
	return in, nil
}

func inTree(root, rel string) (string, error) {
	p := filepath.FromSlash(rel)
	if !filepath.IsLocal(p) {
		return "", fmt.Errorf("path %q leaves the repository", rel)
	}
	return filepath.Join(root, p), nil
}

func releaseKey(r jobs.ReleaseSpec) store.ReleaseKey {
	return store.ReleaseKey{Cluster: r.Cluster, Namespace: r.Namespace, ReleaseName: r.ReleaseName}
}

// waitReleaseSlot waits until this run holds the release's slot: at most one
// run per release executes at a time, across replicas. The slot is tied to
// the run record, whose heartbeat the queue keeps; a run lost with its
// process frees it.
func waitReleaseSlot(ctx context.Context, st *store.Store, key store.ReleaseKey, runID int64) (func(), error) {
	return worker.HoldSlot(ctx, "release", runID,
		func(ctx context.Context) (bool, error) { return st.TakeReleaseSlot(ctx, key, runID) },
		func(ctx context.Context) error { return st.FreeReleaseSlot(ctx, key, runID) })
}

// runLogHead opens the run's log: what is tested where.
func runLogHead(a jobs.ReleaseTest) string {
	return fmt.Sprintf("[strata] helm test of %s: release %s in cluster %s, namespace %s, at %s for @%s\n",
		a.Target, a.Release.ReleaseName, a.Release.Cluster, a.Release.Namespace, a.HeadSHA, a.User)
}

// runLog is the rest of the run's full record: every hook with its start
// and all of its logs, and the release writes, without the check's size
// limit.
func runLog(res *helm.Report, err error) string {
	var b strings.Builder
	if err != nil {
		fmt.Fprintf(&b, "[strata] error: %v\n", err)
	}
	if res == nil {
		return b.String()
	}
	for _, h := range res.UpgradeHooks {
		fmt.Fprintf(&b, "[strata] %s hook %s: %s, started %s, took %s %s\n", h.Event, h.Name, h.Phase,
			h.Started.UTC().Format(time.RFC3339Nano), words.Duration(h.Duration), h.Err)
	}
	for _, h := range res.Hooks {
		fmt.Fprintf(&b, "[strata] hook %s: %s, started %s, took %s %s\n", h.Name, h.Phase,
			h.Started.UTC().Format(time.RFC3339Nano), words.Duration(h.Duration), h.Err)
	}
	b.WriteString(res.Markdown(16 << 20))
	if j, err := json.Marshal(res.Writes); err == nil {
		fmt.Fprintf(&b, "\n[strata] release writes: %s\n", j)
	}
	return b.String()
}

// releaseTestInterrupted reports a run whose server died while it ran: it
// is not run again, since an upgrade may have been under way.
func releaseTestInterrupted(ctx context.Context, d *worker.Deps, job queue.Interrupted) error {
	var a jobs.ReleaseTest
	if err := json.Unmarshal(job.Args, &a); err != nil {
		return fmt.Errorf("interrupted helm test %d: %w", job.JobID, err)
	}
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	status, err := rep.CheckStatus(ctx, a.CheckRunID)
	if err != nil {
		return err
	}
	if status == "completed" {
		return nil
	}
	note := fmt.Sprintf("The server stopped while this Helm test ran, so it is not run again. Release %s in cluster %s, "+
		"namespace %s may be left in a pending state; the next `/helm-test %s` (or Re-run) marks a stuck revision failed "+
		"first, and says so.", markdown.Quote(a.Release.ReleaseName), markdown.Quote(a.Release.Cluster), markdown.Quote(a.Release.Namespace), a.Target)
	return rep.UpdateCheck(ctx, a.CheckRunID, report.Check{Name: checks.HelmTest(a.Target), Conclusion: "failure",
		ExternalID: checks.ExternalID(a.PR), Title: "Helm test interrupted", Summary: note, Actions: helmTestActions})
}
