package githubtest

import (
	"fmt"
	"strings"
)

// Payload builders: webhook payloads made from the fake's state, so that they
// are complete and agree with what the REST API answers. Each returns the
// payload and the event name for Deliver.

// Payload is a webhook payload.
type Payload = map[string]any

// base is what every payload carries. Callers hold s.mu.
func (r *Repo) base(action, sender string) Payload {
	p := Payload{
		"repository":   r.json(),
		"sender":       r.s.userJSON(sender),
		"installation": map[string]any{"id": r.s.installationID, "node_id": nodeID("MDIz", r.s.installationID)},
	}
	if action != "" {
		p["action"] = action
	}
	return p
}

// IssueCommentEvent adds a comment by user on issue or pull request number
// and returns its issue_comment "created" payload.
func (r *Repo) IssueCommentEvent(number int, user, body string) (Payload, string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	c := r.addComment(number, user, body)
	p := r.base("created", user)
	p["issue"] = r.issueJSON(r.issues[number])
	p["comment"] = r.commentJSON(c)
	return p, "issue_comment"
}

// IssueCommentEditedEvent changes a comment's body, as its author would, and
// returns the issue_comment "edited" payload.
func (r *Repo) IssueCommentEditedEvent(commentID int64, body string) (Payload, string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	c := r.findComment(commentID)
	if c == nil {
		r.s.t.Fatalf("githubtest: no comment %d in %s", commentID, r.FullName())
	}
	old := c.body
	c.body, c.updated = body, now()
	p := r.base("edited", c.user)
	p["issue"] = r.issueJSON(r.issues[c.issue])
	p["comment"] = r.commentJSON(c)
	p["changes"] = map[string]any{"body": map[string]any{"from": old}}
	return p, "issue_comment"
}

// PullRequestEvent returns a pull_request payload: opened, reopened,
// synchronize (after PushPR), closed (after ClosePR), ...
func (r *Repo) PullRequestEvent(action string, number int) (Payload, string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	is := r.mustPR(number)
	if action == "reopened" {
		is.state, is.closed = "open", nil
	}
	p := r.base(action, is.author)
	p["number"] = number
	pr := r.pullJSON(is)
	p["pull_request"] = pr
	if action == "synchronize" {
		head := pr["head"].(map[string]any)["sha"].(string)
		before := head
		if cm := r.s.commitObj(head); len(cm.parents) > 0 {
			before = cm.parents[0]
		}
		p["before"], p["after"] = before, head
	}
	if action == "closed" && is.pr.merged {
		p["sender"] = r.s.userJSON(r.Owner)
	}
	return p, "pull_request"
}

// PullRequestReviewEvent returns the pull_request_review "submitted"
// payload of a review added with AddReview.
func (r *Repo) PullRequestReviewEvent(number int, reviewID int64) (Payload, string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	is := r.mustPR(number)
	for _, rv := range is.pr.reviews {
		if rv.id == reviewID {
			p := r.base("submitted", rv.user)
			rj := r.reviewJSON(is, rv)
			rj["state"] = strings.ToLower(rv.state)
			rj["body"] = nil
			p["review"] = rj
			p["pull_request"] = r.pullJSON(is)
			return p, "pull_request_review"
		}
	}
	r.s.t.Fatalf("githubtest: no review %d on #%d", reviewID, number)
	return nil, ""
}

// PushEvent returns the push payload of branch moving from before to after
// (the branch's current SHA when after is ""). before "" means the push
// created the branch.
func (r *Repo) PushEvent(branch, before, after string) (Payload, string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	if after == "" {
		after = r.refs["heads/"+branch]
	}
	zero := strings.Repeat("0", 40)
	created := before == ""
	if created {
		before = zero
	}
	p := r.base("", r.Owner)
	c := &call{s: r.s, repo: r}
	var commits []any
	inBefore := r.s.ancestors(before)
	for sha := range r.s.ancestors(after) {
		if !inBefore[sha] {
			commits = append(commits, r.pushCommit(c, sha))
		}
	}
	if commits == nil {
		commits = []any{}
	}
	repo := r.json()
	repo["created_at"] = r.created.Unix()
	repo["pushed_at"] = now().Unix()
	repo["stargazers"] = 0
	repo["master_branch"] = r.defaultBranch
	p["repository"] = repo
	p["ref"] = "refs/heads/" + branch
	p["before"], p["after"] = before, after
	p["created"], p["deleted"], p["forced"] = created, after == zero, !created && !r.s.ancestors(after)[before]
	p["base_ref"] = nil
	p["compare"] = fmt.Sprintf("%s%s/compare/%s...%s", r.s.WebURL(), r.FullName(), before[:12], after[:12])
	p["commits"] = commits
	p["head_commit"] = r.pushCommit(c, after)
	p["pusher"] = map[string]any{"name": r.Owner, "email": r.Owner + "@users.noreply.github.test"}
	return p, "push"
}

func (r *Repo) pushCommit(c *call, sha string) map[string]any {
	cm := r.s.commitObj(sha)
	if cm == nil {
		return nil
	}
	var parent string
	if len(cm.parents) > 0 {
		parent = cm.parents[0]
	}
	added, removed, modified := []string{}, []string{}, []string{}
	for _, f := range c.diffFiles(parent, sha) {
		fm := f.(map[string]any)
		switch fm["status"] {
		case "added":
			added = append(added, fm["filename"].(string))
		case "removed":
			removed = append(removed, fm["filename"].(string))
		default:
			modified = append(modified, fm["filename"].(string))
		}
	}
	sig := map[string]any{"name": cm.author, "email": cm.email, "username": cm.author, "date": cm.date}
	return map[string]any{
		"id": sha, "tree_id": cm.tree, "distinct": true, "message": cm.message, "timestamp": cm.date,
		"url": r.s.WebURL() + r.FullName() + "/commit/" + sha, "author": sig, "committer": sig,
		"added": added, "removed": removed, "modified": modified,
	}
}

// CheckRunEvent returns a check_run payload for run checkRunID, sent by user:
// requested_action (a click on the button identifier), rerequested,
// created or completed.
func (r *Repo) CheckRunEvent(action string, checkRunID int64, identifier, user string) (Payload, string) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	cr := r.findCheckRun(checkRunID)
	if cr == nil {
		r.s.t.Fatalf("githubtest: no check run %d in %s", checkRunID, r.FullName())
	}
	p := r.base(action, user)
	run := r.checkRunJSON(cr)
	var prs []any
	for _, is := range r.issues {
		if is.pr != nil && is.state == "open" && is.pr.headRepo.refs["heads/"+is.pr.headRef] == cr.HeadSHA {
			prs = append(prs, map[string]any{
				"id": is.pr.id, "number": is.number, "url": fmt.Sprintf("%srepos/%s/pulls/%d", r.s.APIURL(), r.FullName(), is.number),
				"head": map[string]any{"ref": is.pr.headRef, "sha": cr.HeadSHA, "repo": map[string]any{"id": is.pr.headRepo.id, "name": is.pr.headRepo.Name, "url": r.s.APIURL() + "repos/" + is.pr.headRepo.FullName()}},
				"base": map[string]any{"ref": is.pr.baseRef, "sha": r.refs["heads/"+is.pr.baseRef], "repo": map[string]any{"id": r.id, "name": r.Name, "url": r.s.APIURL() + "repos/" + r.FullName()}},
			})
		}
	}
	if prs == nil {
		prs = []any{}
	}
	run["pull_requests"] = prs
	run["check_suite"].(map[string]any)["pull_requests"] = prs
	p["check_run"] = run
	if action == "requested_action" {
		p["requested_action"] = map[string]any{"identifier": identifier}
	}
	return p, "check_run"
}
