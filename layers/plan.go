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
	st := d.Store
	batch := fmt.Sprintf("%s#%d@%s", repo.FullName, pr.Number, pr.HeadSHA[:12])
	if run := queue.RunFrom(ctx); run != nil {
		batch = fmt.Sprintf("job-%d", run.JobID)
	}
	if _, err := st.CreateBatch(ctx, store.PlanBatch{ID: batch, Repo: repo.FullName, PR: pr.Number, Total: len(layers)}); err != nil {
		return err
	}
	for i, l := range layers {
		progress, err := st.BatchLayer(ctx, batch, l.Name)
		if err != nil {
			return err
		}
		if progress.Started {
			continue
		}
		held, ok, err := lockForPlan(ctx, st, l, store.Lock{Repo: repo.FullName, Layer: l.Name, PR: pr.Number, HeadSHA: pr.HeadSHA,
			Holder: user, InstallationID: repo.InstallationID})
		if err != nil {
			return err
		}
		outcome := lockOutcomeOf(held, ok, pr.HeadSHA)
		if outcome == lockBlocked {
			if err := reportBlocked(ctx, d, rep, repo, pr, l, held, batch, i); err != nil {
				return err
			}
			if err := st.SetBatchLayer(ctx, batch, l.Name, store.BatchLayer{Started: true}); err != nil {
				return err
			}
			continue
		}
		if outcome != lockFree {
			if err := showLock(ctx, d, rep, held, pr.HeadSHA); err != nil {
				return err
			}
		}
		if progress.CheckRunID == 0 {
			progress.CheckRunID, err = rep.CreateCheck(ctx, report.Check{
				Name: checks.Plan(l.Name), HeadSHA: pr.HeadSHA, Status: "queued", ExternalID: checks.ExternalID(pr.Number),
				Title: "Waiting to plan", Summary: fmt.Sprintf("Plan of %s requested by @%s, waiting for a worker.", markdown.Quote(l.Name), user),
			})
			if err != nil {
				return err
			}
			if err := st.SetBatchLayer(ctx, batch, l.Name, progress); err != nil {
				return err
			}
		}
		// The plan's arguments name its check, so inserting it twice (a crash
		// between the insert and the record below) inserts one job.
		_, err = d.Queue.Enqueue(ctx, jobs.LayerPlan{Repo: repo, PR: pr.Number, Target: l.Name, HeadSHA: pr.HeadSHA,
			Layer: specOf(l), User: user, CheckRunID: progress.CheckRunID, Batch: batch, Position: i}, nil)
		if err != nil {
			return err
		}
		progress.Started = true
		if err := st.SetBatchLayer(ctx, batch, l.Name, progress); err != nil {
			return err
		}
	}
	return nil
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
