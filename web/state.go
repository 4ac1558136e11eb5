package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"strata.dev/strata/access"
	"strata.dev/strata/store"
)

// The layer page's managed state (docs/state.md): its versions per
// workspace and its state locks, which any reader of the repository may
// see (numbers, dates, who: never the content), and the admin's Download,
// Roll back and Force unlock. Each action asks the permission table
// (worker.Deps.Authorize) with the viewer's permission on the repository,
// so a crafted request by a writer is refused as the hidden button would be.

// stateVersionsShown is how many versions of each workspace the page lists.
const stateVersionsShown = 100

// layerState is the state part of the layer page.
type layerState struct {
	Workspaces []stateWorkspace
	// Admin: the viewer may download, roll back and force unlock.
	Admin bool
	// AdminUnknown: GitHub did not say whether the viewer is an admin, so
	// the buttons are hidden; the page says so.
	AdminUnknown bool
}

type stateWorkspace struct {
	Name     string
	Lock     *stateLockView
	Versions []stateVersionView
	// URL is the workspace's state path, below which the actions are.
	URL string
}

type stateVersionView struct {
	*store.StateVersion
	Current bool
	PRURL   string
	// LineageShort is the lineage's first 8 characters: enough to tell
	// two states apart in a table.
	LineageShort string
}

// stateLockView is a held state lock with what Terraform said of it.
type stateLockView struct {
	*store.StateLock
	Operation string
	Who       string
	Created   time.Time
}

// terraformLockInfo is Terraform's lock info, as its http backend sends it.
type terraformLockInfo struct {
	Operation string    `json:"Operation"`
	Who       string    `json:"Who"`
	Created   time.Time `json:"Created"`
}

func lockView(l *store.StateLock) *stateLockView {
	v := &stateLockView{StateLock: l}
	var info terraformLockInfo
	if json.Unmarshal(l.Info, &info) == nil {
		v.Operation, v.Who, v.Created = info.Operation, info.Who, info.Created
	}
	return v
}

// stateOf reads the layer's state for its page; nil when it has none.
func (u *UI) stateOf(ctx context.Context, v *Viewer, repo Repo, layer string) (*layerState, error) {
	st := u.opts.Deps.Store
	names, err := st.StateWorkspaces(ctx, repo.FullName, layer)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	locks, err := st.StateLocksOfLayer(ctx, repo.FullName, layer)
	if err != nil {
		return nil, err
	}
	held := map[string]*store.StateLock{}
	for _, l := range locks {
		held[l.Key.Workspace] = l
	}
	data := &layerState{}
	base := repoURL(repo) + "/layers/" + url.PathEscape(layer) + "/state/"
	for _, ws := range names {
		key := store.StateKey{Repo: repo.FullName, Layer: layer, Workspace: ws}
		versions, err := st.StateVersions(ctx, key, stateVersionsShown)
		if err != nil {
			return nil, err
		}
		w := stateWorkspace{Name: ws, URL: base + url.PathEscape(ws)}
		if l := held[ws]; l != nil {
			w.Lock = lockView(l)
		}
		for i, sv := range versions {
			vv := stateVersionView{StateVersion: sv, Current: i == 0, LineageShort: sv.Lineage}
			if len(vv.LineageShort) > 8 {
				vv.LineageShort = vv.LineageShort[:8]
			}
			if sv.PR != 0 {
				vv.PRURL = u.opts.Deps.PRURL(repo.FullName, sv.PR)
			}
			w.Versions = append(w.Versions, vv)
		}
		data.Workspaces = append(data.Workspaces, w)
	}
	d, err := u.authorizeState(ctx, repo, v.Login, access.StateDownload)
	if err != nil {
		u.opts.Log.Warn().Err(err).Str("user", v.Login).Str("repo", repo.FullName).Msg("web UI: read the user's permission for the state")
		data.AdminUnknown = true
	}
	data.Admin = err == nil && d.Allowed
	return data, nil
}

// authorizeState asks the permission table whether login may do action on
// the repository's state, with their permission as the installation reads
// it (the viewer's own token is not asked: it says what they may see).
func (u *UI) authorizeState(ctx context.Context, repo Repo, login, action string) (access.Decision, error) {
	gr, err := u.opts.Deps.Repo(repo.JobRepo())
	if err != nil {
		return access.Decision{}, err
	}
	return u.opts.Deps.Authorize(ctx, gr, login, action)
}

// stateAction authorizes an action on a workspace's state named by the
// path: the viewer, the repository, and the state's key, or false when it
// answered (refused with the table's reason: 403).
func (u *UI) stateAction(w http.ResponseWriter, r *http.Request, action string, post bool) (*Viewer, Repo, store.StateKey, bool) {
	v, repo, ok := u.pathRepo(w, r, post)
	if !ok {
		return nil, Repo{}, store.StateKey{}, false
	}
	key := store.StateKey{Repo: repo.FullName, Layer: r.PathValue("layer"), Workspace: r.PathValue("workspace")}
	log := u.opts.Log.With().Str("user", v.Login).Str("repo", repo.FullName).Str("layer", key.Layer).
		Str("workspace", key.Workspace).Str("action", action).Logger()
	d, err := u.authorizeState(r.Context(), repo, v.Login, action)
	if err != nil {
		log.Warn().Err(err).Msg("web UI: read the user's permission for a state action")
		u.fail(w, v, http.StatusBadGateway, "GitHub did not say whether you are an admin of "+repo.FullName+". Try again in a moment.")
		return nil, Repo{}, store.StateKey{}, false
	}
	if !d.Allowed {
		log.Info().Str("reason", d.Reason).Msg("web UI: state action refused")
		u.showLayer(w, r, v, repo, key.Layer, http.StatusForbidden, action+" refused: "+d.Reason, true)
		return nil, Repo{}, store.StateKey{}, false
	}
	log.Info().Msg("web UI: state action")
	return v, repo, key, true
}

// stateDownload sends one version of a state as a JSON attachment. It
// holds the layer's secrets in the clear: admins only, never cached.
func (u *UI) stateDownload(w http.ResponseWriter, r *http.Request) {
	v, _, key, ok := u.stateAction(w, r, access.StateDownload, false)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		u.notFound(w, v)
		return
	}
	content, sv, err := u.opts.Deps.Store.StateVersionContent(r.Context(), key, id)
	if errors.Is(err, store.ErrNotFound) {
		u.notFound(w, v)
		return
	}
	if err != nil {
		u.dbFailed(w, v, err)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="%s"`, stateFileName(key, sv)))
	_, _ = w.Write(content)
}

// stateFileName names a downloaded version: the layer, the workspace and
// the serial, in characters every file system and header accepts.
func stateFileName(key store.StateKey, sv *store.StateVersion) string {
	safe := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
				b[i] = '_'
			}
		}
		return string(b)
	}
	return fmt.Sprintf("%s-%s-serial-%d.tfstate", safe(key.Layer), safe(sv.Key.Workspace), sv.Serial)
}

// stateRollback makes a new version with an old one's content, recorded
// as a rollback by the viewer. It is refused while Terraform holds the
// state's lock: a run in the middle of a plan or apply would write over it.
func (u *UI) stateRollback(w http.ResponseWriter, r *http.Request) {
	v, repo, key, ok := u.stateAction(w, r, access.StateRollback, true)
	if !ok {
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		u.notFound(w, v)
		return
	}
	ctx := r.Context()
	st := u.opts.Deps.Store
	if l, err := st.StateLockOf(ctx, key); err != nil {
		u.dbFailed(w, v, err)
		return
	} else if l != nil {
		u.showLayer(w, r, v, repo, key.Layer, http.StatusConflict,
			fmt.Sprintf("The state of %s is locked by Terraform (lock %s): wait for its run to end, or Force unlock it first.", key, l.ID), true)
		return
	}
	nv, err := st.RollbackState(ctx, key, id, v.Login, u.opts.StateRetention)
	if errors.Is(err, store.ErrNotFound) {
		u.notFound(w, v)
		return
	}
	if err != nil {
		u.dbFailed(w, v, err)
		return
	}
	http.Redirect(w, r, layerFlashURL(repo, key.Layer, "rolled-back", key.Layer, nv.Serial), http.StatusSeeOther)
}

// stateUnlock clears a workspace's state lock, whoever holds it.
func (u *UI) stateUnlock(w http.ResponseWriter, r *http.Request) {
	v, repo, key, ok := u.stateAction(w, r, access.StateUnlock, true)
	if !ok {
		return
	}
	if err := u.opts.Deps.Store.UnlockState(r.Context(), key, ""); err != nil {
		u.dbFailed(w, v, err)
		return
	}
	http.Redirect(w, r, layerFlashURL(repo, key.Layer, "state-unlocked", key.Layer, 0), http.StatusSeeOther)
}

// layerFlashURL is the layer page with an action's message.
func layerFlashURL(repo Repo, layer, flash, name string, n int64) string {
	q := url.Values{"flash": {flash}, "name": {name}}
	if n != 0 {
		q.Set("pr", strconv.FormatInt(n, 10))
	}
	return repoURL(repo) + "/layers/" + url.PathEscape(layer) + "?" + q.Encode()
}
