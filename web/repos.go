package web

import (
	"net/http"
	"strings"

	"strata.dev/strata/store"
)

// repoRow is one line of the repository list.
type repoRow struct {
	Repo Repo
	store.Activity
}

// reposPage lists the repositories the viewer may see, with what Strata
// holds and runs in each.
func (u *UI) reposPage(w http.ResponseWriter, r *http.Request) {
	v, ok := u.viewer(w, r)
	if !ok {
		return
	}
	act, err := u.opts.Deps.Store.ActivityOf(r.Context())
	if err != nil {
		u.fail(w, v, http.StatusInternalServerError, "Strata could not read its database: "+err.Error())
		return
	}
	rows := make([]repoRow, 0, len(v.Repos))
	for _, repo := range v.Repos {
		a := act[strings.ToLower(repo.FullName)]
		rows = append(rows, repoRow{Repo: repo, Activity: a})
	}
	u.render(w, http.StatusOK, "repos", Page{Title: "Repositories", Viewer: v, Nav: "repos", Data: rows})
}
