package githubtest

import (
	"net/http"
	"sort"
	"strings"
)

// Pull requests opened, listed and edited through the API (a promotion PR
// that Strata opens from a staging branch), as GitHub answers them.

// Pull is a pull request as a test reads it.
type Pull struct {
	Number      int
	Title, Body string
	State       string // open or closed
	Merged      bool
	Head, Base  string // branch names
	Author      string
}

// Pulls returns the pull requests whose head is the branch head of r, by
// number.
func (r *Repo) Pulls(head string) []Pull {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []Pull
	for _, is := range r.issues {
		if is.pr != nil && is.pr.headRepo == r && is.pr.headRef == head {
			out = append(out, Pull{Number: is.number, Title: is.title, Body: is.body, State: is.state, Merged: is.pr.merged,
				Head: is.pr.headRef, Base: is.pr.baseRef, Author: is.author})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// headOf resolves a head parameter, "branch" or "owner:branch", to the
// repository and branch it names; nil when the owner has no such repository.
func (c *call) headOf(head string) (*Repo, string) {
	if owner, branch, ok := strings.Cut(head, ":"); ok {
		return c.s.repos[strings.ToLower(owner+"/"+c.repo.Name)], branch
	}
	return c.repo, head
}

// listPulls filters as GitHub does: state (open by default), head as
// owner:branch, base; newest first.
func (s *Server) listPulls(c *call) {
	state := c.query("state")
	if state == "" {
		state = "open"
	}
	var headRepo *Repo
	var headRef string
	if h := c.query("head"); h != "" {
		headRepo, headRef = c.headOf(h)
		if headRepo == nil || !strings.Contains(h, ":") {
			c.page([]any{}) // GitHub matches nothing without the owner
			return
		}
	}
	var found []*issue
	for _, is := range c.repo.issues {
		pr := is.pr
		if pr == nil || (state != "all" && is.state != state) || (headRepo != nil && (pr.headRepo != headRepo || pr.headRef != headRef)) ||
			(c.query("base") != "" && pr.baseRef != c.query("base")) {
			continue
		}
		found = append(found, is)
	}
	sort.Slice(found, func(i, j int) bool { return found[i].number > found[j].number })
	out := []any{}
	for _, is := range found {
		out = append(out, c.repo.pullJSON(is))
	}
	c.page(out)
}

func (s *Server) createPull(c *call) {
	if issueTooLong(c) {
		return
	}
	title, base := c.str("title"), c.str("base")
	headRepo, head := c.headOf(c.str("head"))
	if title == "" {
		c.invalid("title wasn't supplied")
		return
	}
	if headRepo == nil || headRepo.refs["heads/"+head] == "" {
		c.invalid("Validation Failed: head is invalid")
		return
	}
	if c.repo.refs["heads/"+base] == "" {
		c.invalid("Validation Failed: base is invalid")
		return
	}
	for _, is := range c.repo.issues {
		if is.pr != nil && is.state == "open" && is.pr.headRepo == headRepo && is.pr.headRef == head && is.pr.baseRef == base {
			c.invalid("Validation Failed: A pull request already exists for " + headRepo.Owner + ":" + head + ".")
			return
		}
	}
	headSHA, baseSHA := headRepo.refs["heads/"+head], c.repo.refs["heads/"+base]
	if s.ancestors(baseSHA)[headSHA] {
		c.invalid("Validation Failed: No commits between " + base + " and " + head)
		return
	}
	is := c.repo.newIssue(title, s.BotLogin())
	is.body = c.str("body")
	is.pr = &pull{id: s.id(), headRepo: headRepo, headRef: head, baseRef: base, mergeable: true, mergeableState: "clean"}
	c.json(http.StatusCreated, c.repo.pullJSON(is))
}

func (s *Server) updatePull(c *call) {
	is := c.repo.issues[int(c.intParam("pull_number"))]
	if is == nil || is.pr == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	if issueTooLong(c) {
		return
	}
	if t, ok := c.body["title"].(string); ok {
		is.title = t
	}
	if b, ok := c.body["body"].(string); ok {
		is.body = b
	}
	t := now()
	switch c.str("state") {
	case "closed":
		if is.state != "closed" {
			is.state, is.closed = "closed", &t
		}
	case "open":
		if is.pr.merged {
			c.invalid("Validation Failed: state cannot be changed. The pull request has been merged.")
			return
		}
		is.state, is.closed = "open", nil
	}
	is.updated = t
	c.json(http.StatusOK, c.repo.pullJSON(is))
}
