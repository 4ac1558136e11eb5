package app

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"strata.dev/strata/runlog"
	"strata.dev/strata/store"
)

// runLog serves a run's full log, the link at the end of a check's or a
// comment's output that was cut to GitHub's limit. The link's key, derived
// from the webhook secret, is what opens it; logs are redacted before they
// are stored.
func (s *Server) runLog(w http.ResponseWriter, r *http.Request) {
	if !r.URL.Query().Has("key") {
		s.serveUI(w, r) // the run's page, for a logged-in user
		return
	}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	secret := s.cfg.GitHub.WebhookSecret
	if err != nil || secret == "" || !runlog.Valid(secret, id, r.URL.Query().Get("key")) {
		http.NotFound(w, r)
		return
	}
	run, err := s.store.RunRecord(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		http.Error(w, "the run could not be read", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	fmt.Fprintf(w, "Strata run %d: %s", run.ID, run.Kind)
	if run.Target != "" {
		fmt.Fprintf(w, " %s", run.Target)
	}
	fmt.Fprintf(w, " in %s", run.Repo)
	if run.PR != 0 {
		fmt.Fprintf(w, "#%d", run.PR)
	}
	if run.HeadSHA != "" {
		fmt.Fprintf(w, " at %s", run.HeadSHA)
	}
	fmt.Fprintf(w, "\nstatus: %s", run.Status)
	if run.Conclusion != "" {
		fmt.Fprintf(w, " (%s)", run.Conclusion)
	}
	fmt.Fprintf(w, "\nstarted: %s\n", run.StartedAt.Format(time.RFC3339))
	if !run.FinishedAt.IsZero() {
		fmt.Fprintf(w, "finished: %s\n", run.FinishedAt.Format(time.RFC3339))
	}
	fmt.Fprint(w, "\n")
	// A chunk at a time: a log of tens of MB is never held whole.
	if err := s.store.WriteLog(r.Context(), id, w); err != nil {
		s.log.Warn().Err(err).Int64("run", id).Msg("serve a run's log")
	}
}
