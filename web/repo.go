package web

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strings"

	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/store"
)

// repoView is the repository page: its layers with their locks and last
// runs, its takeovers, releases and syncs, all as the store holds them.
type repoView struct {
	Repo      Repo
	Layers    []*layerRow
	Takeovers []takeoverRow
	Releases  []runView
	Syncs     []syncRow
	// Discovery is what the default branch's last push defined, nil
	// before one was seen: its Sync files left out or not used.
	Discovery *store.SyncDiscovery
}

// syncRow is a sync: its last hydration run, and what the store records of
// its destination (syncs.go), either of which may be missing.
type syncRow struct {
	Name string
	// File is the file that defines the sync: .strata.yaml, or the Sync
	// file it was discovered in.
	File   string
	Run    *runView
	Record *store.SyncHydration
	// SourceURL and DestURL link the latest source commit hydrated and the
	// destination commit holding its output.
	SourceURL, DestURL string
}

// layerRow is one layer: its lock, its last plan and apply, and its drift
// state when it asks for drift detection.
type layerRow struct {
	Name string
	// URL is the layer's page.
	URL       string
	Lock      *store.Lock
	LockPRURL string
	Plan      *runView
	Apply     *runView
	Drift     *store.DriftLayer
	DriftRun  *runView
}

type takeoverRow struct {
	*store.Takeover
	PRURL string
	// URL is the sync's path, below which its Release form posts.
	URL string
}

func (u *UI) repoPage(w http.ResponseWriter, r *http.Request) {
	v, repo, ok := u.pathRepo(w, r, false)
	if !ok {
		return
	}
	u.showRepo(w, r, v, repo, http.StatusOK, flashOf(r.URL.Query(), v.Login), false)
}

// showRepo renders the repository page, with a flash from an action.
func (u *UI) showRepo(w http.ResponseWriter, r *http.Request, v *Viewer, repo Repo, status int, flash string, refusal bool) {
	data, err := u.repoData(r.Context(), repo)
	if err != nil {
		u.dbFailed(w, v, err)
		return
	}
	u.render(w, status, "repo", Page{Title: repo.FullName, Viewer: v, Nav: "repos", Data: data, Flash: flash, Refusal: refusal})
}

func (u *UI) repoData(ctx context.Context, repo Repo) (*repoView, error) {
	st := u.opts.Deps.Store
	name := repo.FullName
	data := &repoView{Repo: repo}
	layers := map[string]*layerRow{}
	layer := func(n string) *layerRow {
		if l, ok := layers[n]; ok {
			return l
		}
		l := &layerRow{Name: n, URL: repoURL(repo) + "/layers/" + url.PathEscape(n)}
		layers[n] = l
		return l
	}
	locks, err := st.LocksOfRepo(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, l := range locks {
		row := layer(l.Layer)
		row.Lock, row.LockPRURL = l, u.opts.Deps.PRURL(name, l.PR)
	}
	drifts, err := st.DriftLayersOf(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, d := range drifts {
		layer(d.Layer).Drift = d
	}
	var syncRuns []runView
	runs, err := st.LatestRuns(ctx, name, jobs.LayerPlan{}.Kind(), jobs.LayerApply{}.Kind(), jobs.DriftRun{}.Kind(),
		jobs.ReleaseTest{}.Kind(), jobs.SyncHydrate{}.Kind())
	if err != nil {
		return nil, err
	}
	// Newest first: the first run seen of a layer and kind is its last.
	for _, run := range runs {
		rv := u.runView(run, queue.JobOrigin{})
		switch run.Kind {
		case jobs.LayerPlan{}.Kind():
			layer(run.Target).Plan = &rv
		case jobs.DriftRun{}.Kind():
			layer(run.Target).DriftRun = &rv
		case jobs.LayerApply{}.Kind():
			for _, n := range strings.Split(run.Target, ",") {
				if l := layer(n); l.Apply == nil {
					l.Apply = &rv
				}
			}
		case jobs.ReleaseTest{}.Kind():
			data.Releases = append(data.Releases, rv)
		case jobs.SyncHydrate{}.Kind():
			syncRuns = append(syncRuns, rv)
		}
	}
	for _, l := range layers {
		data.Layers = append(data.Layers, l)
	}
	sort.Slice(data.Layers, func(i, j int) bool { return data.Layers[i].Name < data.Layers[j].Name })
	sort.Slice(data.Releases, func(i, j int) bool { return data.Releases[i].Target < data.Releases[j].Target })
	data.Discovery, err = st.SyncDiscoveryOf(ctx, name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	if data.Syncs, err = u.syncRows(ctx, name, syncRuns, data.Discovery); err != nil {
		return nil, err
	}
	takeovers, err := st.TakeoversOfRepo(ctx, name)
	if err != nil {
		return nil, err
	}
	for _, t := range takeovers {
		data.Takeovers = append(data.Takeovers, takeoverRow{Takeover: t, PRURL: u.opts.Deps.PRURL(name, t.PR),
			URL: repoURL(repo) + "/syncs/" + url.PathEscape(t.Sync)})
	}
	return data, nil
}

// syncRows joins a repository's last hydration runs with the store's
// records of its syncs and the syncs its default branch defines (disc, nil
// when unknown), by name. A sync's file is the one the default branch
// names, else the one its last hydration was recorded with.
func (u *UI) syncRows(ctx context.Context, repo string, runs []runView, disc *store.SyncDiscovery) ([]syncRow, error) {
	records, err := u.opts.Deps.Store.SyncHydrationsOf(ctx, repo)
	if err != nil {
		return nil, err
	}
	rows := map[string]*syncRow{}
	row := func(n string) *syncRow {
		if rows[n] == nil {
			rows[n] = &syncRow{Name: n}
		}
		return rows[n]
	}
	for i := range runs {
		row(runs[i].Target).Run = &runs[i]
	}
	for _, h := range records {
		r := row(h.Sync)
		r.Record, r.SourceURL = h, u.opts.Deps.CommitURL(repo, h.SourceCommit)
		var spec jobs.SyncSpec
		known := json.Unmarshal([]byte(h.Spec), &spec) == nil
		if known {
			r.File = definedIn(spec.File)
		}
		if h.DestCommit != "" {
			dest := repo
			if known && spec.DestRepo != "" {
				dest = spec.DestRepo
			}
			r.DestURL = u.opts.Deps.CommitURL(dest, h.DestCommit)
		}
	}
	if disc != nil {
		for _, s := range disc.Syncs {
			row(s.Name).File = definedIn(s.File)
		}
	}
	out := make([]syncRow, 0, len(rows))
	for _, r := range rows {
		out = append(out, *r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// definedIn is the file a sync's definition came from: its Sync file, or
// .strata.yaml.
func definedIn(file string) string {
	if file == "" {
		return config.RepoFile
	}
	return file
}
