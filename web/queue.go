package web

import (
	"net/http"
	"time"

	"github.com/riverqueue/river/rivertype"

	"strata.dev/strata/queue"
)

// failedWindow is how far back the queue page shows failed jobs.
const failedWindow = 24 * time.Hour

type queueRow struct {
	queue.JobInfo
	// Kind is the job's kind in the user's words.
	Kind  string
	Repo  Repo
	PRURL string
	// Own marks Strata's own jobs, of no repository: shown without their
	// errors, which may name repositories the viewer cannot see.
	Own bool
}

type queueView struct {
	Jobs []queueRow
	// Unavailable says the queue could not be read.
	Unavailable bool
}

func (u *UI) queuePage(w http.ResponseWriter, r *http.Request) {
	v, ok := u.viewer(w, r)
	if !ok {
		return
	}
	data := &queueView{}
	if u.opts.Queue == nil {
		data.Unavailable = true
	} else {
		names := make([]string, 0, len(v.Repos))
		for _, repo := range v.Repos {
			names = append(names, repo.FullName)
		}
		list, err := u.opts.Queue.Jobs(r.Context(), queue.JobFilter{Repos: names, FailedSince: u.opts.Now().Add(-failedWindow)})
		if err != nil {
			u.dbFailed(w, v, err)
			return
		}
		for _, j := range list {
			row := queueRow{JobInfo: j, Kind: kindName(j.Kind)}
			if j.Repo == "" {
				row.Own, row.Error, row.User = true, "", ""
			} else if repo, ok := v.Repo(j.Repo); ok {
				row.Repo = repo
				if j.PR != 0 {
					row.PRURL = u.opts.Deps.PRURL(repo.FullName, j.PR)
				}
			} else {
				continue // the queue's filter is by name; never show another repository's job
			}
			data.Jobs = append(data.Jobs, row)
		}
	}
	u.render(w, http.StatusOK, "queue", Page{Title: "Queue", Viewer: v, Nav: "queue", Data: data})
}

// stateName names a job's state as the page shows it.
func stateName(s rivertype.JobState) string {
	switch s {
	case rivertype.JobStateAvailable, rivertype.JobStatePending:
		return "queued"
	case rivertype.JobStateRetryable:
		return "retrying"
	case rivertype.JobStateDiscarded:
		return "failed"
	}
	return string(s)
}
