package githubtest

import (
	"fmt"
	"net/http"
	"time"
)

// Check runs and commit statuses.

// CheckRun is a check run as tests see it.
type CheckRun struct {
	ID          int64
	HeadSHA     string
	Name        string
	Status      string
	Conclusion  string
	Title       string
	Summary     string
	Text        string
	ExternalID  string
	DetailsURL  string
	Actions     []CheckRunAction
	StartedAt   time.Time
	CompletedAt time.Time
	// Received is when the fake received the request that last changed
	// the check run: what a benchmark timing Strata from outside reads.
	Received time.Time
}

// CheckRunAction is a button on a check run.
type CheckRunAction struct {
	Label, Description, Identifier string
}

type checkRun struct{ CheckRun }

// CheckRuns returns the check runs on a commit, oldest first.
func (r *Repo) CheckRuns(sha string) []CheckRun {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []CheckRun
	for _, cr := range r.checkRuns {
		if cr.HeadSHA == sha {
			out = append(out, cr.copy())
		}
	}
	return out
}

// CheckRun returns the latest check run called name on a commit.
func (r *Repo) CheckRun(sha, name string) (CheckRun, bool) {
	runs := r.CheckRuns(sha)
	for i := len(runs) - 1; i >= 0; i-- {
		if runs[i].Name == name {
			return runs[i], true
		}
	}
	return CheckRun{}, false
}

// AllCheckRuns returns every check run of the repository, oldest first.
func (r *Repo) AllCheckRuns() []CheckRun {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []CheckRun
	for _, cr := range r.checkRuns {
		out = append(out, cr.copy())
	}
	return out
}

func (cr *checkRun) copy() CheckRun {
	c := cr.CheckRun
	c.Actions = append([]CheckRunAction(nil), cr.Actions...)
	return c
}

func (r *Repo) findCheckRun(id int64) *checkRun {
	for _, cr := range r.checkRuns {
		if cr.ID == id {
			return cr
		}
	}
	return nil
}

// apply sets the fields a create or update request carries.
func (cr *checkRun) apply(body map[string]any) {
	cr.Received = time.Now()
	str := func(k string) (string, bool) { v, ok := body[k].(string); return v, ok }
	if v, ok := str("name"); ok {
		cr.Name = v
	}
	if v, ok := str("details_url"); ok {
		cr.DetailsURL = v
	}
	if v, ok := str("external_id"); ok {
		cr.ExternalID = v
	}
	if v, ok := str("status"); ok {
		cr.Status = v
	}
	if v, ok := str("started_at"); ok {
		cr.StartedAt, _ = time.Parse(time.RFC3339, v)
	}
	if v, ok := str("conclusion"); ok {
		cr.Conclusion, cr.Status = v, "completed"
	}
	if v, ok := str("completed_at"); ok {
		cr.CompletedAt, _ = time.Parse(time.RFC3339, v)
	}
	if cr.Status == "completed" && cr.CompletedAt.IsZero() {
		cr.CompletedAt = now()
	}
	if out, ok := body["output"].(map[string]any); ok {
		cr.Title, _ = out["title"].(string)
		cr.Summary, _ = out["summary"].(string)
		cr.Text, _ = out["text"].(string)
	}
	if acts, ok := body["actions"].([]any); ok {
		cr.Actions = nil
		for _, a := range acts {
			m, _ := a.(map[string]any)
			l, _ := m["label"].(string)
			d, _ := m["description"].(string)
			i, _ := m["identifier"].(string)
			cr.Actions = append(cr.Actions, CheckRunAction{Label: l, Description: d, Identifier: i})
		}
	}
}

func (r *Repo) checkRunJSON(cr *checkRun) map[string]any {
	s := r.s
	api := fmt.Sprintf("%srepos/%s/check-runs/%d", s.APIURL(), r.FullName(), cr.ID)
	timeOrNil := func(t time.Time) any {
		if t.IsZero() {
			return nil
		}
		return t
	}
	actions := []any{}
	for _, a := range cr.Actions {
		actions = append(actions, map[string]any{"label": a.Label, "description": a.Description, "identifier": a.Identifier})
	}
	details := cr.DetailsURL
	if details == "" {
		details = "https://strata.example" // GitHub falls back to the App's homepage
	}
	suiteID := cr.ID + 1_000_000
	return map[string]any{
		"id": cr.ID, "node_id": nodeID("CR", cr.ID), "head_sha": cr.HeadSHA, "external_id": cr.ExternalID,
		"url": api, "html_url": fmt.Sprintf("%s%s/runs/%d", s.WebURL(), r.FullName(), cr.ID),
		"details_url": details, "status": cr.Status, "conclusion": nilIfEmpty(cr.Conclusion),
		"started_at": timeOrNil(cr.StartedAt), "completed_at": timeOrNil(cr.CompletedAt), "name": cr.Name,
		"output": map[string]any{"title": nilIfEmpty(cr.Title), "summary": nilIfEmpty(cr.Summary), "text": nilIfEmpty(cr.Text),
			"annotations_count": 0, "annotations_url": api + "/annotations"},
		"check_suite": map[string]any{"id": suiteID, "node_id": nodeID("CS", suiteID), "head_branch": nil,
			"head_sha": cr.HeadSHA, "status": cr.Status, "conclusion": nilIfEmpty(cr.Conclusion),
			"url":    fmt.Sprintf("%srepos/%s/check-suites/%d", s.APIURL(), r.FullName(), suiteID),
			"before": nil, "after": nil, "pull_requests": []any{}, "app": s.appJSON(),
			"created_at": cr.StartedAt, "updated_at": cr.StartedAt},
		"app": s.appJSON(), "pull_requests": []any{}, "actions": actions,
	}
}

func (s *Server) createCheckRun(c *call) {
	sha := c.str("head_sha")
	if s.commitObj(sha) == nil {
		c.invalid("No commit found for SHA: " + sha)
		return
	}
	cr := &checkRun{CheckRun{ID: s.id(), HeadSHA: sha, Status: "queued", StartedAt: now()}}
	cr.apply(c.body)
	c.repo.checkRuns = append(c.repo.checkRuns, cr)
	c.json(http.StatusCreated, c.repo.checkRunJSON(cr))
}

func (s *Server) updateCheckRun(c *call) {
	cr := c.repo.findCheckRun(c.intParam("check_run_id"))
	if cr == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	cr.apply(c.body)
	c.json(http.StatusOK, c.repo.checkRunJSON(cr))
}

func (s *Server) getCheckRun(c *call) {
	cr := c.repo.findCheckRun(c.intParam("check_run_id"))
	if cr == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	c.json(http.StatusOK, c.repo.checkRunJSON(cr))
}

// listCheckRuns lists a commit's check runs, newest first; filter=latest
// (the default) keeps the newest run of each name.
func (s *Server) listCheckRuns(c *call) {
	sha, ok := c.repo.resolve(c.params["ref"])
	if !ok {
		c.fail(http.StatusUnprocessableEntity, "No commit found for SHA: "+c.params["ref"])
		return
	}
	seen := map[string]bool{}
	runs := []any{}
	for i := len(c.repo.checkRuns) - 1; i >= 0; i-- {
		cr := c.repo.checkRuns[i]
		if cr.HeadSHA != sha || (c.query("filter") != "all" && seen[cr.Name]) {
			continue
		}
		seen[cr.Name] = true
		if name := c.query("check_name"); name != "" && cr.Name != name {
			continue
		}
		if st := c.query("status"); st != "" && cr.Status != st {
			continue
		}
		runs = append(runs, c.repo.checkRunJSON(cr))
	}
	c.json(http.StatusOK, map[string]any{"total_count": len(runs), "check_runs": c.paginate(runs)})
}

func (s *Server) createStatus(c *call) {
	sha := c.params["sha"]
	if s.commitObj(sha) == nil {
		c.invalid("No commit found for SHA: " + sha)
		return
	}
	id := s.id()
	st := map[string]any{
		"id": id, "node_id": nodeID("SC", id), "state": c.str("state"), "description": nilIfEmpty(c.str("description")),
		"target_url": nilIfEmpty(c.str("target_url")), "context": c.str("context"), "created_at": now(), "updated_at": now(),
		"url": s.APIURL() + "repos/" + c.repo.FullName() + "/statuses/" + sha, "avatar_url": nil, "creator": s.userJSON(s.BotLogin()),
	}
	if st["context"] == "" {
		st["context"] = "default"
	}
	c.repo.statuses[sha] = append(c.repo.statuses[sha], st)
	c.json(http.StatusCreated, st)
}

func (s *Server) combinedStatus(c *call) {
	sha, ok := c.repo.resolve(c.params["ref"])
	if !ok {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	latest := map[string]map[string]any{}
	var order []string
	for _, st := range c.repo.statuses[sha] {
		ctx := st["context"].(string)
		if latest[ctx] == nil {
			order = append(order, ctx)
		}
		latest[ctx] = st
	}
	state, statuses := "success", []any{}
	if len(order) == 0 {
		state = "pending"
	}
	for _, ctx := range order {
		st := latest[ctx]
		statuses = append(statuses, st)
		switch st["state"] {
		case "failure", "error":
			state = "failure"
		case "pending":
			if state == "success" {
				state = "pending"
			}
		}
	}
	c.json(http.StatusOK, map[string]any{"state": state, "statuses": statuses, "sha": sha, "total_count": len(statuses),
		"repository": c.repo.json(), "commit_url": s.APIURL() + "repos/" + c.repo.FullName() + "/commits/" + sha,
		"url": s.APIURL() + "repos/" + c.repo.FullName() + "/commits/" + sha + "/status"})
}
