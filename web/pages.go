package web

import (
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strconv"

	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/store"
)

// Layout is the UI's layout (templates/layout.html) around content, the
// page's "content" template (which may define others), for pages
// served outside the UI: the setup pages, served before the App and so the
// UI exist, look like the rest of it. Execute it with a Page; without a
// Viewer the layout has no navigation and loads no script, so that a page
// whose Content-Security-Policy allows none does not refer to one.
func Layout(content string) (*template.Template, error) {
	t, err := template.New("layout.html").Funcs(pageFuncs).ParseFS(templateFS, "templates/layout.html")
	if err != nil {
		return nil, err
	}
	if _, err := t.New("content").Parse(content); err != nil {
		return nil, err
	}
	return t, nil
}

// pageRoutes adds the pages below the repository list.
func (u *UI) pageRoutes() {
	u.mux.HandleFunc("GET /repos/{owner}/{repo}", u.repoPage)
	u.mux.HandleFunc("GET /repos/{owner}/{repo}/layers/{layer}", u.layerPage)
	u.mux.HandleFunc("POST /repos/{owner}/{repo}/layers/{layer}/unlock", u.unlockLayer)
	u.mux.HandleFunc("POST /repos/{owner}/{repo}/syncs/{sync}/release", u.releaseSync)
	u.mux.HandleFunc("GET /repos/{owner}/{repo}/layers/{layer}/state/{workspace}/{id}", u.stateDownload)
	u.mux.HandleFunc("POST /repos/{owner}/{repo}/layers/{layer}/state/{workspace}/{id}/rollback", u.stateRollback)
	u.mux.HandleFunc("POST /repos/{owner}/{repo}/layers/{layer}/state/{workspace}/unlock", u.stateUnlock)
	u.mux.HandleFunc("GET /runs/{id}", u.runPage)
	u.mux.HandleFunc("GET /runs/{id}/events", u.runEvents)
	u.mux.HandleFunc("GET /queue", u.queuePage)
	u.mux.HandleFunc("GET /sandbox", u.sandboxPage)
}

// pathRepo is the repository a page's path names, when the viewer may see
// it; otherwise it answers 404, as for one that does not exist.
func (u *UI) pathRepo(w http.ResponseWriter, r *http.Request, post bool) (*Viewer, Repo, bool) {
	v, ok := u.viewerOf(w, r, post)
	if !ok {
		return nil, Repo{}, false
	}
	repo, ok := v.Repo(r.PathValue("owner") + "/" + r.PathValue("repo"))
	if !ok {
		u.notFound(w, v)
	}
	return v, repo, ok
}

// viewerOf is viewer, or post for a form post.
func (u *UI) viewerOf(w http.ResponseWriter, r *http.Request, post bool) (*Viewer, bool) {
	if post {
		return u.post(w, r)
	}
	return u.viewer(w, r)
}

// dbFailed answers a request whose store read failed.
func (u *UI) dbFailed(w http.ResponseWriter, v *Viewer, err error) {
	u.opts.Log.Error().Err(err).Msg("web UI: read the store")
	u.fail(w, v, http.StatusInternalServerError, "Strata could not read its database. Reload in a moment; if it persists, see the server log.")
}

// runView is a run as the pages list it, with its links.
type runView struct {
	*store.Run
	// Kind is the run's kind in the user's words.
	Kind     string
	PRURL    string
	CheckURL string
	// User is who started it, when its job still says.
	User string
}

// Outcome is what the run's state pill says: the conclusion of the check
// it reported to once it finished (a plan that failed reported failure,
// though its job succeeded), else its status.
func (v runView) Outcome() string {
	if v.Status == store.RunSucceeded && v.Conclusion != "" {
		return v.Conclusion
	}
	return v.Status
}

// runView adds a run's links; its job's origin, when known, says who
// started it and the check it reports to, for a run whose check the store
// does not know.
func (u *UI) runView(r *store.Run, origin queue.JobOrigin) runView {
	v := runView{Run: r, Kind: kindName(r.Kind), User: origin.User}
	if r.PR != 0 {
		v.PRURL = u.opts.Deps.PRURL(r.Repo, r.PR)
	}
	check := r.CheckRunID
	if check == 0 {
		check = origin.CheckRunID
	}
	if check != 0 {
		v.CheckURL = fmt.Sprintf("%s%s/runs/%d", u.opts.Deps.WebURL(), r.Repo, check)
	}
	return v
}

// kindName names a job kind as users know it: by the command or check.
func kindName(kind string) string {
	switch kind {
	case jobs.LayerPlan{}.Kind():
		return "plan"
	case jobs.LayerApply{}.Kind():
		return "apply"
	case jobs.DriftRun{}.Kind():
		return "drift"
	case jobs.ReleaseTest{}.Kind():
		return "helm-test"
	case jobs.ReleaseCleanup{}.Kind():
		return "cleanup"
	case jobs.SyncHydrate{}.Kind():
		return "hydrate"
	case jobs.SyncPreview{}.Kind():
		return "preview"
	case jobs.SyncTakeover{}.Kind():
		return "takeover"
	}
	return kind
}

// Flashes after an action are fixed messages chosen by a query parameter;
// the names they hold must look like names, so a link cannot make
// Strata's page say something else.
var flashes = map[string]string{
	"unlock":      "Unlock of %s requested by @%s; the lock check on #%d updates when it is done.",
	"release":     "Release of %s requested by @%s; the takeover check on #%d updates when it is done.",
	"not-locked":  "%s is not locked.",
	"not-held":    "%s is not taken over.",
	"no-github":   "GitHub did not answer about %s. Try again in a moment.",
	"not-started": "The request for %s could not be queued. Try again in a moment.",
	// The state's actions are done when the page shows (web/state.go).
	"rolled-back":    "The state of %s was rolled back by @%s: it is now at serial %d.",
	"state-unlocked": "The state lock of %s was cleared.",
}

var flashName = regexp.MustCompile(`^[A-Za-z0-9._/@:+-]{1,200}$`)

// flashOf is the message a redirect after an action asked for.
func flashOf(q url.Values, login string) string {
	msg, ok := flashes[q.Get("flash")]
	name := q.Get("name")
	if !ok || !flashName.MatchString(name) {
		return ""
	}
	switch q.Get("flash") {
	case "unlock", "release", "rolled-back":
		pr, err := strconv.Atoi(q.Get("pr"))
		if err != nil || pr <= 0 {
			return ""
		}
		return fmt.Sprintf(msg, name, login, pr)
	}
	return fmt.Sprintf(msg, name)
}

// flashURL is where an action sends the browser back to, with its message.
func flashURL(repo Repo, flash, name string, pr int) string {
	q := url.Values{"flash": {flash}, "name": {name}}
	if pr != 0 {
		q.Set("pr", strconv.Itoa(pr))
	}
	return repoURL(repo) + "?" + q.Encode()
}

func repoURL(repo Repo) string {
	return "/repos/" + url.PathEscape(repo.Owner) + "/" + url.PathEscape(repo.Name)
}
