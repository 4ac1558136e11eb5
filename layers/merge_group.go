package layers

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/checks"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/markdown"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/jobs"
	"strata.dev/strata/report"
	"strata.dev/strata/store"
	"strata.dev/strata/worker"
)

// mergeGroupWorker answers a merge queue group's checks_requested: it finds
// the group's pull requests, reads what the decision needs (their layers,
// plans, the layers' last applies), decides (decideMergeGroup), plans the
// group's head for the layers that apply on merge and compares, and writes
// `strata/applied` on the group's head once.
type mergeGroupWorker struct {
	river.WorkerDefaults[jobs.MergeGroup]
	d *worker.Deps
}

func (w *mergeGroupWorker) Timeout(*river.Job[jobs.MergeGroup]) time.Duration {
	return jobs.MergeGroupTimeout
}

func (w *mergeGroupWorker) Work(ctx context.Context, job *river.Job[jobs.MergeGroup]) error {
	a, d := job.Args, w.d
	rep, err := d.Reporter(a.Repo)
	if err != nil {
		return err
	}
	logURL := d.LogURL(worker.RunID(ctx))
	id, err := rep.CreateCheck(ctx, report.Check{Name: checks.Applied, HeadSHA: a.HeadSHA, Status: "in_progress", DetailsURL: logURL,
		Title: "Checking the group's pull requests", Summary: "Strata checks that every layer the merge group's pull requests change is applied from them."})
	if err != nil {
		return err
	}
	c, err := w.judge(ctx, rep, a)
	if err != nil {
		ctx := context.WithoutCancel(ctx)
		worker.Warn(ctx, rep.UpdateCheck(ctx, id, report.Check{Name: checks.Applied, Conclusion: "failure", DetailsURL: logURL,
			Title: "Strata could not check the group", Summary: markdown.Block("", err.Error())}), "fail the merge group's check")
		return err
	}
	c.DetailsURL = logURL
	return rep.UpdateCheck(context.WithoutCancel(ctx), id, c)
}

// queueRef is GitHub's merge queue branch: gh-readonly-queue/BASE/pr-N-SHA,
// N the group's last pull request.
var queueRef = regexp.MustCompile(`^refs/heads/gh-readonly-queue/.+/pr-([0-9]+)-[0-9a-f]{40}$`)

// lastOfGroup is the pull request the group's ref names, 0 for none.
func lastOfGroup(ref string) int {
	m := queueRef.FindStringSubmatch(ref)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// judge gathers the group's facts, decides, compares the plans of the
// layers that apply on merge, and returns the check.
func (w *mergeGroupWorker) judge(ctx context.Context, rep *report.Reporter, a jobs.MergeGroup) (report.Check, error) {
	d := w.d
	repo, err := d.Repo(a.Repo)
	if err != nil {
		return report.Check{}, err
	}
	listed, tooMany, err := repo.Commits(ctx, a.BaseSHA, a.HeadSHA)
	if err != nil {
		return report.Check{}, err
	}
	commits := make([]groupCommit, len(listed))
	for i, c := range listed {
		commits[i] = groupCommit{SHA: c.SHA, Parents: c.Parents}
	}
	pulls := map[string][]groupPull{}
	for _, sha := range firstParents(a.HeadSHA, commits) {
		look := lookupOf(sha, commits)
		found, err := repo.PullsOfCommit(ctx, look)
		if err != nil {
			return report.Check{}, err
		}
		for _, p := range found {
			pulls[look] = append(pulls[look], groupPull{Number: p.Number, State: p.State, BaseRef: p.BaseRef})
		}
	}
	members, unknown := groupMembers(a.HeadSHA, commits, pulls, strings.TrimPrefix(a.BaseRef, "refs/heads/"), lastOfGroup(a.HeadRef))
	f := groupFacts{Unknown: unknown, TooMany: tooMany, LastApply: map[string]store.LayerApplied{}}
	for _, n := range members {
		g, err := w.groupPR(ctx, a, n)
		if err != nil {
			return report.Check{}, err
		}
		for _, l := range g.Layers {
			if _, ok := f.LastApply[l.Name]; !ok {
				if f.LastApply[l.Name], err = d.Store.LastApply(ctx, a.FullName, l.Name); err != nil {
					return report.Check{}, err
				}
			}
		}
		f.PRs = append(f.PRs, g)
	}
	items := decideMergeGroup(f)
	if err := w.compare(ctx, rep, a, f, items); err != nil {
		return report.Check{}, err
	}
	return groupCheck(a.HeadSHA, members, items, f.Unknown, f.TooMany), nil
}

// groupPR reads one pull request of the group: the layers it changes, as
// the group's head defines them with policy from the base the group was
// made on (the default branch), its plans and which reviewed changes are
// kept.
func (w *mergeGroupWorker) groupPR(ctx context.Context, a jobs.MergeGroup, n int) (groupPR, error) {
	d := w.d
	pr, err := d.PR(ctx, a.Repo, n)
	if err != nil {
		return groupPR{}, err
	}
	g := groupPR{Number: n, Head: pr.HeadSHA(), Reviewed: map[string]bool{}}
	cfg, err := d.LoadRepoConfig(ctx, pr, a.HeadSHA, a.BaseSHA)
	if err != nil {
		return g, fmt.Errorf("#%d: the configuration at the group's head: %w", n, err)
	}
	all, err := repoLayers(ctx, d, a.Repo, a.HeadSHA, cfg)
	if err != nil {
		return g, err
	}
	files, err := pr.ChangedFiles(ctx)
	if err != nil {
		return g, err
	}
	modules, err := readLayerModules(ctx, d, a.Repo, a.HeadSHA, all, files, false)
	if err != nil {
		return g, err
	}
	g.Layers = touchedLayers(all, files, modules, false)
	if g.Plans, err = d.Store.PlansOfPR(ctx, a.FullName, n); err != nil {
		return g, err
	}
	var onMerge []config.Layer
	for _, l := range g.Layers {
		if !l.AppliesOnMerge() {
			continue
		}
		onMerge = append(onMerge, l)
		if _, err := d.Store.PlanChanges(ctx, a.FullName, n, l.Name, g.Head); err == nil {
			g.Reviewed[l.Name] = true
		} else if !errors.Is(err, store.ErrNotFound) {
			return g, err
		}
	}
	if len(onMerge) == 0 {
		return g, nil
	}
	// What the merge's apply will ask (mergeOnClose), asked now, while the
	// pull request can still be approved.
	if g.Requirements, err = readRequirements(ctx, pr, onMerge); err != nil {
		return g, err
	}
	if err := readCodeownersAt(ctx, pr, a.BaseSHA, onMerge, fetchTree(ctx, d, a.Repo, g.Head), &g.Requirements); err != nil {
		return g, err
	}
	g.Policy, err = readPolicyFacts(ctx, d, a.FullName, n, g.Head, onMerge, cfg.Repo, g.Plans)
	return g, err
}

// compare plans the group's head once for each layer that applies on
// merge and compares it with the reviewed changes of the group's pull
// requests that change it, settling their items.
func (w *mergeGroupWorker) compare(ctx context.Context, rep *report.Reporter, a jobs.MergeGroup, f groupFacts, items []groupItem) error {
	d := w.d
	var order []string
	byLayer := map[string][]int{}
	layerOf := map[string]config.Layer{}
	for i, it := range items {
		if it.State != groupCompare {
			continue
		}
		if _, ok := byLayer[it.Layer.Name]; !ok {
			order = append(order, it.Layer.Name)
			layerOf[it.Layer.Name] = it.Layer
		}
		byLayer[it.Layer.Name] = append(byLayer[it.Layer.Name], i)
	}
	heads := map[int]string{}
	for _, pr := range f.PRs {
		heads[pr.Number] = pr.Head
	}
	for _, name := range order {
		settle := func(state groupState, why string) {
			for _, i := range byLayer[name] {
				items[i].State, items[i].Why = state, why
			}
		}
		changes := map[int][]terraform.PlannedChange{}
		var prs []int
		for _, i := range byLayer[name] {
			n := items[i].PR
			c, err := reviewedChanges(ctx, d, a.FullName, n, name, heads[n])
			if err != nil {
				return err
			}
			changes[n], prs = c, append(prs, n)
		}
		want, conflict := reviewedUnion(changes, prs)
		if conflict != "" {
			settle(groupDiffers, conflict)
			continue
		}
		res, runRep, err := w.planHead(ctx, rep, a, layerOf[name])
		if err != nil {
			settle(groupDiffers, runRep.Redact("planning the group's head failed: "+markdown.Quote(report.FirstLine(errorText(err)))))
			continue
		}
		if diffs := plansEquivalent(want, res.Changes); len(diffs) > 0 {
			settle(groupDiffers, runRep.Redact(fmt.Sprintf("the plan at the group's head %s does not make the changes of the reviewed plan, "+
				"so it would not apply after the merge (the world or the default branch changed since the review); plan it again. The differences:\n\n%s",
				report.Short(a.HeadSHA), indent(diffText(diffs)))))
			continue
		}
		settle(groupEquivalent, fmt.Sprintf("applies on merge; the plan at the group's head %s makes the reviewed changes", report.Short(a.HeadSHA)))
	}
	return nil
}

// indent nests a Markdown list under a list item.
func indent(list string) string {
	return "  " + strings.ReplaceAll(strings.TrimRight(list, "\n"), "\n", "\n  ")
}

// planHead plans a layer at the group's head holding the layer's slot, as
// the post-merge apply will plan the merge commit; nothing is saved.
func (w *mergeGroupWorker) planHead(ctx context.Context, rep *report.Reporter, a jobs.MergeGroup, l config.Layer) (*terraform.PlanResult, *report.Reporter, error) {
	d := w.d
	log := d.LogWriter(ctx)
	release, err := waitSlot(ctx, d.Store, a.FullName, l.Name, worker.RunID(ctx))
	if err != nil {
		log.Close()
		return nil, rep, err
	}
	res, err := planLayer(ctx, d, a.Repo, a.HeadSHA, specOf(l), log, nil, nil)
	release()
	var sensitive []string
	if res != nil {
		sensitive = res.Sensitive
	}
	return res, closeLog(ctx, d, log, rep, sensitive), err
}
