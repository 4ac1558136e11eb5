package web

import (
	"errors"
	"net/http"

	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/store"
)

// layerRuns is how many runs the layer page shows: the latest.
const layerRuns = 50

// layerView is the layer page: its lock and its latest runs.
type layerView struct {
	Repo      Repo
	Layer     string
	Lock      *store.Lock
	LockPRURL string
	Runs      []runView
	// More says there are older runs than those shown.
	More bool
	// Users says whether the queue could tell who started the runs.
	Users bool
	// State is the layer's managed state, nil when Strata keeps none
	// (web/state.go).
	State *layerState
	// Policy is the policy state of the layer's last judged plan, nil
	// when no policy set judged it (web/policy.go).
	Policy *layerPolicy
	// Merges are the layer's latest post-merge applies (web/layer_merges.go).
	Merges []mergeView
}

func (u *UI) layerPage(w http.ResponseWriter, r *http.Request) {
	v, repo, ok := u.pathRepo(w, r, false)
	if !ok {
		return
	}
	u.showLayer(w, r, v, repo, r.PathValue("layer"), http.StatusOK, flashOf(r.URL.Query(), v.Login), false)
}

// showLayer renders the layer page, with a flash from an action.
func (u *UI) showLayer(w http.ResponseWriter, r *http.Request, v *Viewer, repo Repo, layer string, status int, flash string, refusal bool) {
	ctx := r.Context()
	st := u.opts.Deps.Store
	data := &layerView{Repo: repo, Layer: layer}
	lock, err := st.Lock(ctx, repo.FullName, data.Layer)
	switch {
	case err == nil:
		data.Lock, data.LockPRURL = lock, u.opts.Deps.PRURL(repo.FullName, lock.PR)
	case !errors.Is(err, store.ErrNotFound):
		u.dbFailed(w, v, err)
		return
	}
	runs, err := st.RunsOfTarget(ctx, store.TargetRuns{Repo: repo.FullName, Target: data.Layer,
		Kinds:     []string{jobs.LayerPlan{}.Kind(), jobs.DriftRun{}.Kind()},
		ListKinds: []string{jobs.LayerApply{}.Kind()}, Limit: layerRuns + 1})
	if err != nil {
		u.dbFailed(w, v, err)
		return
	}
	if len(runs) > layerRuns {
		runs, data.More = runs[:layerRuns], true
	}
	if data.State, err = u.stateOf(ctx, v, repo, data.Layer); err != nil {
		u.dbFailed(w, v, err)
		return
	}
	if data.Policy, err = u.policyOf(ctx, repo, data.Layer); err != nil {
		u.dbFailed(w, v, err)
		return
	}
	if data.Merges, err = u.mergesOf(ctx, repo, data.Layer); err != nil {
		u.dbFailed(w, v, err)
		return
	}
	if len(runs) == 0 && data.Lock == nil && data.State == nil && len(data.Merges) == 0 {
		// A layer Strata never saw is as absent as one the viewer cannot.
		u.notFound(w, v)
		return
	}
	origins := u.origins(r, runs)
	data.Users = origins != nil
	for _, run := range runs {
		data.Runs = append(data.Runs, u.runView(run, origins[run.JobID]))
	}
	u.render(w, status, "layer", Page{Title: data.Layer + " · " + repo.FullName, Viewer: v, Nav: "repos", Data: data,
		Flash: flash, Refusal: refusal})
}

// origins asks the queue who started the runs' jobs and which checks they
// report to; nil when it cannot tell (the page then says so).
func (u *UI) origins(r *http.Request, runs []*store.Run) map[int64]queue.JobOrigin {
	if u.opts.Queue == nil {
		return nil
	}
	ids := make([]int64, 0, len(runs))
	for _, run := range runs {
		ids = append(ids, run.JobID)
	}
	origins, err := u.opts.Queue.JobOrigins(r.Context(), ids)
	if err != nil {
		u.opts.Log.Warn().Err(err).Msg("web UI: read the runs' jobs")
		return nil
	}
	return origins
}
