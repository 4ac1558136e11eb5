package githubtest

import (
	"fmt"
	"strings"
)

// JSON for issues, pull requests and reviews, shared by the REST API and the
// webhook payloads. Callers hold s.mu.

func (r *Repo) issueJSON(is *issue) map[string]any {
	s := r.s
	api := fmt.Sprintf("%srepos/%s/issues/%d", s.APIURL(), r.FullName(), is.number)
	kind := "issues"
	if is.pr != nil {
		kind = "pull"
	}
	m := map[string]any{
		"id": is.id, "node_id": nodeID("I", is.id), "number": is.number, "title": is.title, "body": nilIfEmpty(is.body),
		"user": s.userJSON(is.author), "state": is.state, "locked": false, "active_lock_reason": nil,
		"labels": []any{}, "assignee": nil, "assignees": []any{}, "milestone": nil, "comments": is.commentsCount,
		"created_at": is.created, "updated_at": is.updated, "closed_at": is.closed, "author_association": r.association(is.author),
		"url": api, "repository_url": s.APIURL() + "repos/" + r.FullName(), "labels_url": api + "/labels{/name}",
		"comments_url": api + "/comments", "events_url": api + "/events",
		"html_url":     fmt.Sprintf("%s%s/%s/%d", s.WebURL(), r.FullName(), kind, is.number),
		"timeline_url": api + "/timeline", "performed_via_github_app": nil, "state_reason": nil,
		"reactions": reactionRollup(api + "/reactions"),
	}
	if is.pr != nil {
		web := fmt.Sprintf("%s%s/pull/%d", s.WebURL(), r.FullName(), is.number)
		var mergedAt any
		if is.pr.merged {
			mergedAt = is.closed
		}
		m["draft"] = false
		m["pull_request"] = map[string]any{
			"url":      fmt.Sprintf("%srepos/%s/pulls/%d", s.APIURL(), r.FullName(), is.number),
			"html_url": web, "diff_url": web + ".diff", "patch_url": web + ".patch", "merged_at": mergedAt,
		}
	}
	return m
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func reactionRollup(url string) map[string]any {
	m := map[string]any{"url": url, "total_count": 0}
	for _, k := range []string{"+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes"} {
		m[k] = 0
	}
	return m
}

// association is author_association: OWNER, COLLABORATOR or CONTRIBUTOR.
func (r *Repo) association(login string) string {
	switch {
	case login == r.Owner:
		return "OWNER"
	case r.perms[login] != "" && r.perms[login] != "none":
		return "COLLABORATOR"
	}
	return "CONTRIBUTOR"
}

func (r *Repo) branchJSON(repo *Repo, ref, sha string) map[string]any {
	return map[string]any{
		"label": repo.Owner + ":" + ref, "ref": ref, "sha": sha,
		"user": r.s.userJSON(repo.Owner), "repo": repo.json(),
	}
}

func (r *Repo) pullJSON(is *issue) map[string]any {
	s := r.s
	pr := is.pr
	api := fmt.Sprintf("%srepos/%s/pulls/%d", s.APIURL(), r.FullName(), is.number)
	issueAPI := fmt.Sprintf("%srepos/%s/issues/%d", s.APIURL(), r.FullName(), is.number)
	web := fmt.Sprintf("%s%s/pull/%d", s.WebURL(), r.FullName(), is.number)
	head := pr.headRepo.refs["heads/"+pr.headRef]
	if pr.merged {
		head = s.commitObj(pr.mergeCommit).parents[1]
	}
	base := r.refs["heads/"+pr.baseRef]
	if pr.merged {
		base = s.commitObj(pr.mergeCommit).parents[0]
	}
	var mergedAt, mergeCommit, mergedBy any
	if pr.merged {
		mergedAt, mergeCommit, mergedBy = is.closed, pr.mergeCommit, s.userJSON(r.Owner)
	}
	commits, additions, deletions, changed := 0, 0, 0, 0
	mb := s.mergeBase(base, head)
	inBase := s.ancestors(mb)
	for sha := range s.ancestors(head) {
		if !inBase[sha] {
			commits++
		}
	}
	c := &call{s: s, repo: r}
	for _, f := range c.diffFiles(mb, head) {
		fm := f.(map[string]any)
		additions += fm["additions"].(int)
		deletions += fm["deletions"].(int)
		changed++
	}
	link := func(h string) map[string]string { return map[string]string{"href": h} }
	return map[string]any{
		"url": api, "id": pr.id, "node_id": nodeID("PR", pr.id), "html_url": web,
		"diff_url": web + ".diff", "patch_url": web + ".patch", "issue_url": issueAPI,
		"commits_url": api + "/commits", "review_comments_url": api + "/comments",
		"review_comment_url": s.APIURL() + "repos/" + r.FullName() + "/pulls/comments{/number}",
		"comments_url":       issueAPI + "/comments", "statuses_url": s.APIURL() + "repos/" + r.FullName() + "/statuses/" + head,
		"number": is.number, "state": is.state, "locked": false, "title": is.title, "user": s.userJSON(is.author),
		"body": nilIfEmpty(is.body), "labels": []any{}, "milestone": nil, "active_lock_reason": nil,
		"created_at": is.created, "updated_at": is.updated, "closed_at": is.closed, "merged_at": mergedAt,
		"merge_commit_sha": mergeCommit, "assignee": nil, "assignees": []any{}, "requested_reviewers": []any{},
		"requested_teams": []any{}, "head": r.branchJSON(pr.headRepo, pr.headRef, head),
		"base": r.branchJSON(r, pr.baseRef, base), "author_association": r.association(is.author),
		"auto_merge": nil, "draft": false, "merged": pr.merged, "mergeable": pr.mergeable,
		"rebaseable": pr.mergeable, "mergeable_state": pr.mergeableState, "merged_by": mergedBy,
		"comments": is.commentsCount, "review_comments": 0, "maintainer_can_modify": false,
		"commits": commits, "additions": additions, "deletions": deletions, "changed_files": changed,
		"_links": map[string]any{
			"self": link(api), "html": link(web), "issue": link(issueAPI), "comments": link(issueAPI + "/comments"),
			"review_comments": link(api + "/comments"), "commits": link(api + "/commits"),
			"review_comment": link(s.APIURL() + "repos/" + r.FullName() + "/pulls/comments{/number}"),
			"statuses":       link(s.APIURL() + "repos/" + r.FullName() + "/statuses/" + head),
		},
	}
}

func (r *Repo) reviewJSON(is *issue, rv review) map[string]any {
	s := r.s
	web := fmt.Sprintf("%s%s/pull/%d", s.WebURL(), r.FullName(), is.number)
	pullAPI := fmt.Sprintf("%srepos/%s/pulls/%d", s.APIURL(), r.FullName(), is.number)
	return map[string]any{
		"id": rv.id, "node_id": nodeID("PRR", rv.id), "user": s.userJSON(rv.user), "body": "",
		"state": strings.ToUpper(rv.state), "commit_id": rv.commitID, "submitted_at": rv.submitted,
		"html_url": fmt.Sprintf("%s#pullrequestreview-%d", web, rv.id), "pull_request_url": pullAPI,
		"author_association": r.association(rv.user),
		"_links": map[string]any{"html": map[string]string{"href": fmt.Sprintf("%s#pullrequestreview-%d", web, rv.id)},
			"pull_request": map[string]string{"href": pullAPI}},
	}
}
