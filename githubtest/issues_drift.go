package githubtest

import (
	"fmt"
	"net/http"
	"sort"
	"unicode/utf8"
)

// Issues that are not pull requests: created and edited through the API
// (Strata's drift reports), or closed by a person in a test.

// Issue is an issue as tests see it.
type Issue struct {
	Number int
	Title  string
	Body   string
	State  string // open or closed
	Author string
}

// maxIssueTitle is GitHub's limit on an issue title, in characters.
const maxIssueTitle = 256

func (r *Repo) issueOf(is *issue) Issue {
	return Issue{Number: is.number, Title: is.title, Body: is.body, State: is.state, Author: is.author}
}

// Issues returns the issues that are not pull requests, by number.
func (r *Repo) Issues() []Issue {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []Issue
	for _, is := range r.issues {
		if is.pr == nil {
			out = append(out, r.issueOf(is))
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Number < out[j].Number })
	return out
}

// CloseIssue closes an issue, as a person on GitHub would.
func (r *Repo) CloseIssue(number int) {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	is := r.issues[number]
	if is == nil || is.pr != nil {
		r.s.t.Fatalf("githubtest: %s has no issue #%d", r.FullName(), number)
	}
	t := now()
	is.state, is.closed, is.updated = "closed", &t, t
}

// issueTooLong is GitHub's answer to a title or body over its limits.
func issueTooLong(c *call) bool {
	field, max := "", 0
	if t, ok := c.body["title"].(string); ok && utf8.RuneCountInString(t) > maxIssueTitle {
		field, max = "title", maxIssueTitle
	}
	if b, ok := c.body["body"].(string); ok && utf8.RuneCountInString(b) > maxCommentChars {
		field, max = "body", maxCommentChars
	}
	if field == "" {
		return false
	}
	c.s.violation(c.r.Method, c.r.URL.Path, fmt.Sprintf("%s is too long (maximum is %d characters)", field, max))
	c.json(http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
		"errors":            []fieldError{{Resource: "Issue", Field: field, Code: "custom", Message: fmt.Sprintf("%s is too long (maximum is %d characters)", field, max)}},
		"documentation_url": "https://docs.github.com/rest"})
	return true
}

func (s *Server) createIssue(c *call) {
	if issueTooLong(c) {
		return
	}
	title := c.str("title")
	if title == "" {
		c.invalid("title wasn't supplied")
		return
	}
	is := c.repo.newIssue(title, s.BotLogin())
	is.body = c.str("body")
	c.json(http.StatusCreated, c.repo.issueJSON(is))
}

func (s *Server) updateIssue(c *call) {
	is := c.repo.issues[int(c.intParam("issue_number"))]
	if is == nil {
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
		is.state, is.closed = "open", nil
	}
	is.updated = t
	c.json(http.StatusOK, c.repo.issueJSON(is))
}
