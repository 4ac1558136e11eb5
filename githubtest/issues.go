package githubtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"
)

// Issue comments, reactions, and the GraphQL minimizeComment mutation.

type comment struct {
	id              int64
	issue           int
	body, user      string
	created         time.Time
	updated         time.Time
	minimized       bool
	minimizedReason string
}

// Comment is an issue or pull request comment, as tests see it.
type Comment struct {
	ID              int64
	NodeID          string
	Issue           int
	Body            string
	User            string
	Minimized       bool
	MinimizedReason string // the GraphQL classifier, e.g. OUTDATED
}

// Reaction is a reaction to a comment.
type Reaction struct {
	ID      int64
	Content string
	User    string
}

// Comments returns the comments of issue or pull request number, oldest first.
func (r *Repo) Comments(number int) []Comment {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	var out []Comment
	for _, c := range r.comments {
		if c.issue == number {
			out = append(out, Comment{ID: c.id, NodeID: nodeID("IC", c.id), Issue: c.issue, Body: c.body,
				User: c.user, Minimized: c.minimized, MinimizedReason: c.minimizedReason})
		}
	}
	return out
}

// Reactions returns the reactions to a comment.
func (r *Repo) Reactions(commentID int64) []Reaction {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return append([]Reaction(nil), r.reactions[commentID]...)
}

// AddComment adds a comment by user, as a person on GitHub would, and
// returns its id. See IssueCommentEvent for the webhook.
func (r *Repo) AddComment(number int, user, body string) int64 {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return r.addComment(number, user, body).id
}

func (r *Repo) addComment(number int, user, body string) *comment {
	is := r.issues[number]
	if is == nil {
		r.s.t.Fatalf("githubtest: %s has no issue #%d", r.FullName(), number)
	}
	t := now()
	c := &comment{id: r.s.id(), issue: number, body: body, user: user, created: t, updated: t}
	r.comments = append(r.comments, c)
	is.commentsCount++
	return c
}

func (r *Repo) findComment(id int64) *comment {
	for _, c := range r.comments {
		if c.id == id {
			return c
		}
	}
	return nil
}

func (r *Repo) commentJSON(c *comment) map[string]any {
	s := r.s
	kind := "issues"
	if r.issues[c.issue].pr != nil {
		kind = "pull"
	}
	api := fmt.Sprintf("%srepos/%s/issues/comments/%d", s.APIURL(), r.FullName(), c.id)
	return map[string]any{
		"id": c.id, "node_id": nodeID("IC", c.id), "url": api, "body": c.body, "user": s.userJSON(c.user),
		"html_url":   fmt.Sprintf("%s%s/%s/%d#issuecomment-%d", s.WebURL(), r.FullName(), kind, c.issue, c.id),
		"issue_url":  fmt.Sprintf("%srepos/%s/issues/%d", s.APIURL(), r.FullName(), c.issue),
		"created_at": c.created, "updated_at": c.updated, "author_association": r.association(c.user),
		"performed_via_github_app": nil, "reactions": reactionRollup(api + "/reactions"),
	}
}

func (s *Server) createComment(c *call) {
	n := int(c.intParam("issue_number"))
	if c.repo.issues[n] == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	cm := c.repo.addComment(n, s.BotLogin(), c.str("body"))
	c.json(http.StatusCreated, c.repo.commentJSON(cm))
}

func (s *Server) listComments(c *call) {
	n := int(c.intParam("issue_number"))
	if c.repo.issues[n] == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	out := []any{}
	for _, cm := range c.repo.comments {
		if cm.issue == n {
			out = append(out, c.repo.commentJSON(cm))
		}
	}
	c.page(out)
}

func (s *Server) getComment(c *call) {
	cm := c.repo.findComment(c.intParam("comment_id"))
	if cm == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	c.json(http.StatusOK, c.repo.commentJSON(cm))
}

func (s *Server) updateComment(c *call) {
	cm := c.repo.findComment(c.intParam("comment_id"))
	if cm == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	if cm.user != s.BotLogin() {
		c.fail(http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	cm.body, cm.updated = c.str("body"), now()
	c.json(http.StatusOK, c.repo.commentJSON(cm))
}

func (s *Server) createReaction(c *call) {
	id := c.intParam("comment_id")
	if c.repo.findComment(id) == nil {
		c.fail(http.StatusNotFound, "Not Found")
		return
	}
	content := c.str("content")
	status := http.StatusCreated
	var rc Reaction
	for _, existing := range c.repo.reactions[id] {
		if existing.Content == content && existing.User == s.BotLogin() {
			rc, status = existing, http.StatusOK // GitHub answers 200 with the existing reaction
		}
	}
	if status == http.StatusCreated {
		rc = Reaction{ID: s.id(), Content: content, User: s.BotLogin()}
		c.repo.reactions[id] = append(c.repo.reactions[id], rc)
	}
	c.json(status, map[string]any{"id": rc.ID, "node_id": nodeID("REA", rc.ID), "user": s.userJSON(rc.User),
		"content": rc.Content, "created_at": now()})
}

var (
	minimizeRe   = regexp.MustCompile(`\bminimizeComment\s*\(`)
	subjectIDRe  = regexp.MustCompile(`subjectId\s*:\s*"([^"]+)"`)
	classifierRe = regexp.MustCompile(`classifier\s*:\s*([A-Z_]+)`)
)

// serveGraphQL answers the minimizeComment mutation; any other query is an
// error that fails the test.
func (s *Server) serveGraphQL(w http.ResponseWriter, r *http.Request) {
	gqlErr := func(msg string) {
		s.violation(r.Method, r.URL.Path, msg)
		writeJSON(w, http.StatusOK, map[string]any{"errors": []any{map[string]any{"message": msg}}})
	}
	if r.Method != http.MethodPost {
		s.violation(r.Method, r.URL.Path, "GraphQL wants POST")
		writeJSON(w, http.StatusNotFound, ghError("Not Found"))
		return
	}
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if cred == "" || (!strings.EqualFold(scheme, "bearer") && !strings.EqualFold(scheme, "token")) || s.verifyToken(cred) != nil {
		writeJSON(w, http.StatusUnauthorized, ghError("Bad credentials"))
		return
	}
	var req struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		gqlErr("Problems parsing JSON")
		return
	}
	if !minimizeRe.MatchString(req.Query) {
		gqlErr("githubtest: unsupported GraphQL query: " + firstLine(req.Query))
		return
	}
	var subject, classifier string
	if in, ok := req.Variables["input"].(map[string]any); ok {
		subject, _ = in["subjectId"].(string)
		classifier, _ = in["classifier"].(string)
	}
	if m := subjectIDRe.FindStringSubmatch(req.Query); m != nil {
		subject = m[1]
	}
	if m := classifierRe.FindStringSubmatch(req.Query); m != nil {
		classifier = m[1]
	}
	switch classifier {
	case "SPAM", "ABUSE", "OFF_TOPIC", "OUTDATED", "DUPLICATE", "RESOLVED":
	default:
		gqlErr(fmt.Sprintf("Argument 'classifier' on InputObject 'MinimizeCommentInput' has an invalid value (%q)", classifier))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, repo := range s.repos {
		for _, c := range repo.comments {
			if nodeID("IC", c.id) == subject {
				c.minimized, c.minimizedReason = true, classifier
				// GraphQL answers with the fields asked for, no others: a
				// client decoding into a struct refuses any other.
				minimized := map[string]any{}
				if strings.Contains(req.Query, "isMinimized") {
					minimized["isMinimized"] = true
				}
				if strings.Contains(req.Query, "minimizedReason") {
					minimized["minimizedReason"] = strings.ToLower(classifier)
				}
				writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"minimizeComment": map[string]any{
					"minimizedComment": minimized,
				}}})
				return
			}
		}
	}
	writeJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"minimizeComment": nil},
		"errors": []any{map[string]any{"type": "NOT_FOUND", "message": fmt.Sprintf("Could not resolve to a node with the global id of '%s'", subject)}}})
}
