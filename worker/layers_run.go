package worker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/source"
	"strata.dev/strata/store"
)

// errSuperseded cancels a plan whose PR moved to a newer head.
var errSuperseded = errors.New("the pull request has a newer head commit")

// layerPlanWorker plans one layer: it waits for the layer's slot, fetches
// the tree at the head, runs the engine, stores the plan and reports it.
type layerPlanWorker struct {
	river.WorkerDefaults[jobs.LayerPlan]
	d *Deps
}

func (w *layerPlanWorker) Timeout(*river.Job[jobs.LayerPlan]) time.Duration {
	return jobs.LayerPlanTimeout
}

func (w *layerPlanWorker) Work(ctx context.Context, job *river.Job[jobs.LayerPlan]) error {
	a, d := job.Args, w.d
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	runID := currentRunID(ctx)
	logURL := logURL(d, runID)

	// Nothing runs for an old head or a lock that is gone.
	if why, err := w.stillWanted(ctx, a); err != nil {
		return err
	} else if why != "" {
		return w.cancel(ctx, rep, a, why)
	}

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go watchHead(ctx, d.Store, a.FullName, a.PR, a.HeadSHA, cancel)

	release, err := waitSlot(ctx, d.Store, a.FullName, a.Target, runID)
	if err != nil {
		if errors.Is(context.Cause(ctx), errSuperseded) {
			return w.cancel(context.WithoutCancel(ctx), rep, a, errSuperseded.Error())
		}
		return err
	}
	defer release()

	if err := rep.UpdateCheck(ctx, a.CheckRunID, report.Check{Name: planCheckName(a.Target), Status: "in_progress",
		ExternalID: externalID(a.PR), Title: "Planning", Summary: fmt.Sprintf("Planning `%s` at %s.", a.Target, a.HeadSHA),
		DetailsURL: logURL}); err != nil {
		return err
	}

	var log strings.Builder
	res, err := planLayer(ctx, d, rep, a.Repo, a.HeadSHA, a.Layer, &log)
	// Terraform is done with the layer: the next run of it need not wait for
	// this one's report (a long comment on a large plan took 0.9 s).
	release()
	runRep := rep
	if res != nil {
		runRep = runReporter(d, rep, res.Sensitive)
	}
	if runID != 0 {
		_ = d.Store.AppendLog(context.WithoutCancel(ctx), runID, runRep.Redact(log.String()))
	}
	if errors.Is(context.Cause(ctx), errSuperseded) {
		return w.cancel(context.WithoutCancel(ctx), rep, a, errSuperseded.Error())
	}
	ctx = context.WithoutCancel(ctx)
	var tfErr *terraform.Error
	if err != nil && !errors.As(err, &tfErr) && job.Attempt < job.MaxAttempts {
		return err // fetching or the like: try again
	}
	if err != nil {
		if uerr := runRep.UpdateCheck(ctx, a.CheckRunID, failedCheck(planCheckName(a.Target), a.HeadSHA, a.PR, err, logURL, planActions[1:])); uerr != nil {
			return uerr
		}
		return finishBatchItem(ctx, d, runRep, a.Repo, a.PR, a.Batch, layerReport{Layer: a.Target, Position: a.Position, Error: errorText(err), LogURL: logURL})
	}

	if err := d.Store.SavePlan(ctx, store.Plan{Repo: a.FullName, PR: a.PR, Layer: a.Target, HeadSHA: a.HeadSHA,
		PlanFile: res.PlanFile, Summary: runRep.Redact(res.Summary()), HasChanges: res.HasChanges}); err != nil {
		return err
	}
	if err := runRep.UpdateCheck(ctx, a.CheckRunID, planCheck(a, res, logURL)); err != nil {
		return err
	}
	if err := finishBatchItem(ctx, d, runRep, a.Repo, a.PR, a.Batch, layerReport{Layer: a.Target, Position: a.Position, Result: res, LogURL: logURL}); err != nil {
		return err
	}
	return updateApplied(ctx, d, rep, a.Repo, a.PR, a.HeadSHA)
}

// stillWanted says why a plan should not run: its PR moved on or was
// closed, or the PR no longer holds the layer's lock.
func (w *layerPlanWorker) stillWanted(ctx context.Context, a jobs.LayerPlan) (string, error) {
	if head, err := w.d.Store.PRHead(ctx, a.FullName, a.PR); err != nil {
		return "", err
	} else if head != "" && head != a.HeadSHA {
		return errSuperseded.Error(), nil
	}
	l, err := w.d.Store.Lock(ctx, a.FullName, a.Target)
	if errors.Is(err, store.ErrNotFound) || (err == nil && l.PR != a.PR) {
		return "the pull request no longer holds the lock on this layer", nil
	}
	return "", err
}

// cancel completes a plan that did not run, and its part of the comment.
func (w *layerPlanWorker) cancel(ctx context.Context, rep *report.Reporter, a jobs.LayerPlan, why string) error {
	err := rep.UpdateCheck(ctx, a.CheckRunID, report.Check{Name: planCheckName(a.Target), Conclusion: "cancelled",
		ExternalID: externalID(a.PR), Title: "Cancelled", Summary: "Not planned: " + why + "."})
	if err != nil {
		return err
	}
	return finishBatchItem(ctx, w.d, rep, a.Repo, a.PR, a.Batch, layerReport{Layer: a.Target, Position: a.Position, Error: "cancelled: " + why})
}

func errorText(err error) string {
	var tfErr *terraform.Error
	if errors.As(err, &tfErr) && tfErr.Message != "" {
		return "terraform " + tfErr.Command + ": " + tfErr.Message
	}
	return err.Error()
}

// planLayer runs the engine on the layer in a private copy of the tree at
// sha: Terraform writes into its working directory, and fetched trees are
// shared.
func planLayer(ctx context.Context, d *Deps, rep *report.Reporter, repo jobs.Repo, sha string, l jobs.LayerSpec, log io.Writer) (*terraform.PlanResult, error) {
	setup, done, err := layerSetup(ctx, d, repo, rep, sha, l, log)
	if err != nil {
		return nil, err
	}
	defer done()
	return terraform.Plan(ctx, terraform.PlanInput{Setup: setup, VarFiles: l.VarFiles})
}

// layerSetup fetches the tree at sha into a work dir of its own.
func layerSetup(ctx context.Context, d *Deps, repo jobs.Repo, rep *report.Reporter, sha string, l jobs.LayerSpec, log io.Writer) (terraform.Setup, func(), error) {
	root, release, err := d.Fetcher.Fetch(ctx, source.GitHub{Client: rep.REST}, repo.Owner, repo.Name, sha)
	if err != nil {
		return terraform.Setup{}, nil, err
	}
	defer release()
	work, err := os.MkdirTemp(workRoot(d), "run-")
	if err != nil {
		return terraform.Setup{}, nil, err
	}
	done := func() { os.RemoveAll(work) }
	if err := copyTree(root, work); err != nil {
		done()
		return terraform.Setup{}, nil, fmt.Errorf("copy the tree at %s: %w", sha, err)
	}
	dir := filepath.Join(work, filepath.FromSlash(l.Dir))
	if _, err := os.Stat(dir); err != nil {
		done()
		return terraform.Setup{}, nil, fmt.Errorf("layer %s: directory %s is not in the tree at %s", l.Name, l.Dir, short(sha))
	}
	return terraform.Setup{
		WorkDir: dir, Root: work, Workspace: l.Workspace, TerraformBin: d.Config.TerraformBin,
		PluginCacheDir: filepath.Join(absDataDir(d), "plugin-cache"), Log: log,
	}, done, nil
}

func absDataDir(d *Deps) string {
	dir, err := filepath.Abs(d.Config.DataDir)
	if err != nil {
		return d.Config.DataDir
	}
	return dir
}

func workRoot(d *Deps) string {
	dir := filepath.Join(absDataDir(d), "work")
	_ = os.MkdirAll(dir, 0o700)
	return dir
}

// copyTree copies a fetched tree: regular files and the symlinks the
// fetcher let through (they stay inside the tree).
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case e.IsDir():
			return os.MkdirAll(to, 0o755)
		case e.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case e.Type().IsRegular():
			info, err := e.Info()
			if err != nil {
				return err
			}
			return copyFile(p, to, info.Mode().Perm())
		}
		return nil
	})
}

func copyFile(from, to string, mode fs.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode|0o200)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// slotPoll is how often a run waiting for its layer's slot asks again.
const slotPoll = 100 * time.Millisecond

// waitSlot waits until this run holds the layer's slot: at most one run per
// layer executes at a time, across replicas. The slot is tied to the run
// record, whose heartbeat the queue keeps; a run lost with its process frees
// it.
func waitSlot(ctx context.Context, st *store.Store, repo, layer string, runID int64) (func(), error) {
	return holdSlot(ctx, st, "layer", runID,
		func(ctx context.Context) (bool, error) { return st.TakeSlot(ctx, repo, layer, runID) },
		func(ctx context.Context) error { return st.ReleaseSlot(ctx, repo, layer, runID) })
}

// holdSlot polls take until the run holds the slot of what ("layer",
// "release"), logging when it took it, and returns the release: it logs and
// frees the slot once, however often it is called. Outside a run (runID 0)
// there is no slot to wait for.
func holdSlot(ctx context.Context, st *store.Store, what string, runID int64,
	take func(context.Context) (bool, error), free func(context.Context) error) (func(), error) {
	if runID == 0 {
		return func() {}, nil
	}
	for {
		ok, err := take(ctx)
		if err != nil {
			return nil, err
		}
		if ok {
			_ = st.AppendLog(ctx, runID, fmt.Sprintf("[strata] %s slot taken at %d\n", what, time.Now().UnixMilli()))
			var once sync.Once
			return func() {
				once.Do(func() {
					ctx := context.WithoutCancel(ctx)
					_ = st.AppendLog(ctx, runID, fmt.Sprintf("[strata] %s slot released at %d\n", what, time.Now().UnixMilli()))
					_ = free(ctx)
				})
			}, nil
		}
		select {
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		case <-time.After(slotPoll):
		}
	}
}

// watchHead cancels a plan when its PR gets a newer head.
func watchHead(ctx context.Context, st *store.Store, repo string, pr int, headSHA string, cancel context.CancelCauseFunc) {
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			head, err := st.PRHead(ctx, repo, pr)
			if err == nil && head != "" && head != headSHA {
				cancel(errSuperseded)
				return
			}
		}
	}
}
