package layers

import (
	"context"
	"fmt"

	"strata.dev/strata/checks"
	"strata.dev/strata/command"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// prRef is the PR a layer run is for.
type prRef struct {
	Number  int
	HeadSHA string
	URL     string
}

// planCommand answers /plan [LAYER...]: the named layers, or every layer the
// PR touches.
func planCommand(ctx context.Context, d *worker.Deps, c *worker.CommandContext, cmd command.Command) error {
	a := c.Job
	head := c.PR.HeadSHA()
	if !c.PR.Open() {
		return c.Reply(ctx, fmt.Sprintf("@%s this pull request is closed; nothing to plan.", a.User))
	}
	all, err := repoLayers(ctx, d, a.Repo, head, c.Config)
	if err != nil {
		return err
	}
	names := cmd.(command.Plan).Layers
	var changed []string
	var modules layerModules
	if len(names) == 0 {
		if changed, err = c.PR.ChangedFiles(ctx); err != nil {
			return err
		}
		if modules, err = readLayerModules(ctx, d, a.Repo, head, all, changed, false); err != nil {
			return err
		}
	}
	layers, why := planTargets(all, names, changed, modules)
	if why != "" {
		return c.Reply(ctx, fmt.Sprintf("@%s %s", a.User, why))
	}
	return startPlans(ctx, d, c.Reporter, a.Repo, prRef{Number: a.PR, HeadSHA: head, URL: c.PR.URL()}, a.User, layers)
}

func layerNames(ls []config.Layer) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = l.Name
	}
	return out
}

// startPlans takes each layer's lock for the PR and enqueues its plan, or
// reports the layer blocked by the PR holding it. The plans of one call form
// a batch that ends in one comment. The batch records each step per layer,
// so a retried job (after a failure half-way) starts the layers it had not
// started, and none twice.
func startPlans(ctx context.Context, d *worker.Deps, rep *report.Reporter, repo jobs.Repo, pr prRef, user string, layers []config.Layer) error {
	b := planBatch{d: d, rep: rep, repo: repo, pr: pr, user: user, id: fmt.Sprintf("%s#%d@%s", repo.FullName, pr.Number, pr.HeadSHA[:12])}
	if run := queue.RunFrom(ctx); run != nil {
		b.id = fmt.Sprintf("job-%d", run.JobID)
	}
	if _, err := d.Store.CreateBatch(ctx, store.PlanBatch{ID: b.id, Repo: repo.FullName, PR: pr.Number, Total: len(layers)}); err != nil {
		return err
	}
	for i, l := range layers {
		if err := b.start(ctx, i, l); err != nil {
			return err
		}
	}
	return nil
}

// planBatch is one /plan's batch of layer plans: who asked, for which PR
// head, under which batch id.
type planBatch struct {
	d    *worker.Deps
	rep  *report.Reporter
	repo jobs.Repo
	pr   prRef
	user string
	id   string
}

// start starts the plan of the batch's layer at position i, once: a layer
// the batch started already (the command job run again) is left as it is.
// It acts once on what taking the layer's lock gave (lockOutcomeOf).
func (b planBatch) start(ctx context.Context, i int, l config.Layer) error {
	st, pr := b.d.Store, b.pr
	progress, err := st.BatchLayer(ctx, b.id, l.Name)
	if err != nil || progress.Started {
		return err
	}
	held, ok, err := lockForPlan(ctx, st, l, store.Lock{Repo: b.repo.FullName, Layer: l.Name, PR: pr.Number, HeadSHA: pr.HeadSHA,
		Holder: b.user, InstallationID: b.repo.InstallationID})
	if err != nil {
		return err
	}
	switch lockOutcomeOf(held, ok, pr.HeadSHA) {
	case lockBlocked:
		if err := reportBlocked(ctx, b.d, b.rep, b.repo, pr, l, held, b.id, i); err != nil {
			return err
		}
		return st.SetBatchLayer(ctx, b.id, l.Name, store.BatchLayer{Started: true})
	case lockShown, lockMove:
		if err := showLock(ctx, b.d, b.rep, held, pr.HeadSHA); err != nil {
			return err
		}
	case lockFree:
	}
	return b.enqueue(ctx, i, l, progress)
}

// enqueue queues the plan of the batch's layer at position i with its
// check, created once.
func (b planBatch) enqueue(ctx context.Context, i int, l config.Layer, progress store.BatchLayer) error {
	st, pr := b.d.Store, b.pr
	if progress.CheckRunID == 0 {
		var err error
		progress.CheckRunID, err = b.rep.CreateCheck(ctx, report.Check{
			Name: checks.Plan(l.Name), HeadSHA: pr.HeadSHA, Status: "queued", ExternalID: checks.ExternalID(pr.Number),
			Title: "Waiting to plan", Summary: fmt.Sprintf("Plan of %s requested by @%s, waiting for a worker.", markdown.Quote(l.Name), b.user),
		})
		if err != nil {
			return err
		}
		if err := st.SetBatchLayer(ctx, b.id, l.Name, progress); err != nil {
			return err
		}
	}
	// The plan's arguments name its check, so inserting it twice (a crash
	// between the insert and the record below) inserts one job.
	if _, err := b.d.Queue.Enqueue(ctx, jobs.LayerPlan{Repo: b.repo, PR: pr.Number, Target: l.Name, HeadSHA: pr.HeadSHA,
		Layer: specOf(l), User: b.user, CheckRunID: progress.CheckRunID, Batch: b.id, Position: i}, nil); err != nil {
		return err
	}
	progress.Started = true
	return st.SetBatchLayer(ctx, b.id, l.Name, progress)
}

// reportBlocked completes the layer's plan check as failure, titled with the
// PR holding the lock and linking it. Nothing runs.
func reportBlocked(ctx context.Context, d *worker.Deps, rep *report.Reporter, repo jobs.Repo, pr prRef, l config.Layer, held *store.Lock, batch string, pos int) error {
	layer := l.Name
	url := d.PRURL(repo.FullName, held.PR)
	title := fmt.Sprintf("Locked by #%d", held.PR)
	summary := fmt.Sprintf("Layer %s is locked by [#%d](%s) (planned by @%s since %s). Nothing was planned.\n\n"+
		"Once #%d is merged or closed, or releases the lock with `/unlock %s`, comment `/plan %s` again.",
		markdown.Quote(layer), held.PR, url, held.Holder, held.LockedAt.Format("2006-01-02 15:04 UTC"), held.PR, layer, layer)
	if l.LocksOnApply() {
		summary = blockedByApply(layer, held, url)
	}
	_, err := rep.CreateCheck(ctx, report.Check{
		Name: checks.Plan(layer), HeadSHA: pr.HeadSHA, Conclusion: "failure", ExternalID: checks.ExternalID(pr.Number),
		Title: title, Summary: summary, DetailsURL: url,
		Actions: applyActions,
	})
	if err != nil {
		return err
	}
	return finishBatchItem(ctx, d, rep, repo, pr.Number, batch, layerReport{Layer: layer, Position: pos,
		layerAt:   layerAt{Dir: l.Dir, Workspace: l.Workspace, HeadSHA: pr.HeadSHA, LocksOnApply: l.LocksOnApply(), OnMerge: l.AppliesOnMerge()},
		BlockedBy: held.PR, Error: fmt.Sprintf("%s: %s", title, url)})
}
