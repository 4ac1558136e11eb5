package web

import (
	"context"
	"errors"
	"net/http"
	"strconv"

	"strata.dev/strata/store"
)

// runPage is one run: what it ran, where, its state and its log, which
// follows the run while it runs (events.go).
type runPage struct {
	runView
	Repo      Repo
	CommitURL string
	// Events is the log's event stream, while the run runs.
	Events string
}

func (u *UI) runPage(w http.ResponseWriter, r *http.Request) {
	v, run, repo, ok := u.pathRun(w, r)
	if !ok {
		return
	}
	log, err := u.opts.Deps.Store.Log(r.Context(), run.ID)
	if err != nil {
		u.dbFailed(w, v, err)
		return
	}
	run.Log = log
	data := &runPage{runView: u.runView(run, u.origins(r, []*store.Run{run})[run.JobID]), Repo: repo}
	if run.HeadSHA != "" {
		data.CommitURL = u.opts.Deps.CommitURL(repo.FullName, run.HeadSHA)
	}
	if run.Status == store.RunRunning {
		data.Events = "/runs/" + strconv.FormatInt(run.ID, 10) + "/events?from=" + strconv.Itoa(len(run.Log))
	}
	title := data.Kind
	if run.Target != "" {
		title += " " + run.Target
	}
	u.render(w, http.StatusOK, "run", Page{Title: title, Viewer: v, Nav: "repos", Data: data})
}

// pathRun is the run the path names, when its repository is one the
// viewer may see; otherwise it answers 404, as for one that does not
// exist.
func (u *UI) pathRun(w http.ResponseWriter, r *http.Request) (*Viewer, *store.Run, Repo, bool) {
	v, ok := u.viewer(w, r)
	if !ok {
		return nil, nil, Repo{}, false
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		u.notFound(w, v)
		return nil, nil, Repo{}, false
	}
	run, repo, err := u.visibleRun(r.Context(), v, id)
	if errors.Is(err, store.ErrNotFound) {
		u.notFound(w, v)
		return nil, nil, Repo{}, false
	}
	if err != nil {
		u.dbFailed(w, v, err)
		return nil, nil, Repo{}, false
	}
	return v, run, repo, true
}

// visibleRun reads a run of a repository the viewer may see, without its
// log; any other is ErrNotFound.
func (u *UI) visibleRun(ctx context.Context, v *Viewer, id int64) (*store.Run, Repo, error) {
	run, err := u.opts.Deps.Store.RunRecord(ctx, id)
	if err != nil {
		return nil, Repo{}, err
	}
	repo, ok := v.Repo(run.Repo)
	if !ok || run.Repo == "" {
		return nil, Repo{}, store.ErrNotFound
	}
	return run, repo, nil
}
