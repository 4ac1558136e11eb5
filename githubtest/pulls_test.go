package githubtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
)

func TestPullRequestCommentsAndChecks(t *testing.T) {
	srv := NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	fork := srv.AddFork(repo, "alice")
	files := map[string]string{}
	for i := 0; i < 150; i++ {
		files[fmt.Sprintf("layers/l%03d/main.tf", i)] = "x"
	}
	fork.Commit("feature", files, "many layers")
	pr := repo.OpenPR("alice:feature", "main", "alice")
	repo.SetPermission("bob", "maintain")
	repo.AddReview(pr.Number, "bob", "APPROVED")
	ctx := context.Background()
	c := clientFor(t, srv)

	got, _, err := c.PullRequests.Get(ctx, "acme", "infra", pr.Number)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetHead().GetSHA() != pr.HeadSHA() || got.GetHead().GetRepo().GetFullName() != "alice/infra" || !got.GetMergeable() {
		t.Errorf("pr head = %v", got.GetHead())
	}
	var all []*github.CommitFile
	opt := &github.ListOptions{PerPage: 100}
	for {
		page, resp, err := c.PullRequests.ListFiles(ctx, "acme", "infra", pr.Number, opt)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, page...)
		if resp.NextPage == 0 {
			break
		}
		opt.Page = resp.NextPage
	}
	if len(all) != 150 {
		t.Errorf("files = %d, want 150", len(all))
	}
	reviews, _, err := c.PullRequests.ListReviews(ctx, "acme", "infra", pr.Number, nil)
	if err != nil || len(reviews) != 1 || reviews[0].GetState() != "APPROVED" {
		t.Errorf("reviews = %v, %v", reviews, err)
	}
	perm, _, err := c.Repositories.GetPermissionLevel(ctx, "acme", "infra", "bob")
	if err != nil || perm.GetPermission() != "write" {
		t.Errorf("permission = %v, %v", perm, err)
	}
	is, _, err := c.Issues.Get(ctx, "acme", "infra", pr.Number)
	if err != nil || !is.IsPullRequest() {
		t.Errorf("issue = %v, %v", is, err)
	}

	// Comments, reactions, minimizing.
	userComment := repo.AddComment(pr.Number, "bob", "/plan")
	if _, _, err := c.Reactions.CreateIssueCommentReaction(ctx, "acme", "infra", userComment, "eyes"); err != nil {
		t.Fatal(err)
	}
	if r := repo.Reactions(userComment); len(r) != 1 || r[0].Content != "eyes" || r[0].User != "strata-test[bot]" {
		t.Errorf("reactions = %v", r)
	}
	cm, _, err := c.Issues.CreateComment(ctx, "acme", "infra", pr.Number, &github.IssueComment{Body: github.String("planning")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Issues.EditComment(ctx, "acme", "infra", cm.GetID(), &github.IssueComment{Body: github.String("planned")}); err != nil {
		t.Fatal(err)
	}
	list, _, err := c.Issues.ListComments(ctx, "acme", "infra", pr.Number, nil)
	if err != nil || len(list) != 2 || list[1].GetBody() != "planned" {
		t.Errorf("comments = %v, %v", list, err)
	}
	q := fmt.Sprintf(`{"query":"mutation { minimizeComment(input: {subjectId: \"%s\", classifier: OUTDATED}) { minimizedComment { isMinimized } } }"}`, cm.GetNodeID())
	req, _ := http.NewRequest("POST", srv.GraphQLURL(), bytes.NewBufferString(q))
	req.Header.Set("Authorization", "bearer "+srv.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var gql map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&gql)
	resp.Body.Close()
	if cs := repo.Comments(pr.Number); !cs[1].Minimized || cs[1].MinimizedReason != "OUTDATED" || gql["errors"] != nil {
		t.Errorf("minimized: %v, %v", cs, gql)
	}

	// Check runs.
	head := pr.HeadSHA()
	run, _, err := c.Checks.CreateCheckRun(ctx, "acme", "infra", github.CreateCheckRunOptions{
		Name: "strata/plan: network", HeadSHA: head, Status: github.String("in_progress"),
	})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Checks.UpdateCheckRun(ctx, "acme", "infra", run.GetID(), github.UpdateCheckRunOptions{
		Name: "strata/plan: network", Conclusion: github.String("success"),
		Output:  &github.CheckRunOutput{Title: github.String("1 to add"), Summary: github.String("ok")},
		Actions: []*github.CheckRunAction{{Label: "Apply", Description: "Apply this plan", Identifier: "apply"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	cr, ok := repo.CheckRun(head, "strata/plan: network")
	if !ok || cr.Status != "completed" || cr.Conclusion != "success" || cr.Title != "1 to add" || len(cr.Actions) != 1 {
		t.Errorf("check run = %+v", cr)
	}
	runs, _, err := c.Checks.ListCheckRunsForRef(ctx, "acme", "infra", head, &github.ListCheckRunsOptions{CheckName: github.String("strata/plan: network")})
	if err != nil || runs.GetTotal() != 1 {
		t.Errorf("list = %v, %v", runs, err)
	}
	if _, _, err := c.Repositories.CreateStatus(ctx, "acme", "infra", head, &github.RepoStatus{State: github.String("success"), Context: github.String("ci")}); err != nil {
		t.Fatal(err)
	}
	st, _, err := c.Repositories.GetCombinedStatus(ctx, "acme", "infra", head, nil)
	if err != nil || st.GetState() != "success" {
		t.Errorf("combined = %v, %v", st, err)
	}

	// Merging really merges.
	repo.ClosePR(pr.Number, true)
	if _, ok := repo.FileAt("main", "layers/l042/main.tf"); !ok {
		t.Error("merge did not bring the PR's files to main")
	}
	srv.WaitFor(t, time.Second, func() bool { return len(srv.Violations()) == 0 })
}

func TestRefusals(t *testing.T) {
	rec := &recordingTB{TB: t}
	srv := NewServer(rec)
	repo := srv.AddRepo("acme", "infra")
	head := repo.Branch("main")
	pr := repo.OpenIssue("an issue", "bob")
	c := clientFor(t, srv)
	ctx := context.Background()
	action := func(id string) *github.CheckRunAction {
		return &github.CheckRunAction{Label: "L", Description: "D", Identifier: id}
	}
	cases := []struct {
		name string
		do   func() (*github.Response, error)
		want int
	}{
		{"fourth action", func() (*github.Response, error) {
			_, r, err := c.Checks.CreateCheckRun(ctx, "acme", "infra", github.CreateCheckRunOptions{Name: "x", HeadSHA: head,
				Actions: []*github.CheckRunAction{action("a"), action("b"), action("c"), action("d")}})
			return r, err
		}, 422},
		{"identifier of 21", func() (*github.Response, error) {
			_, r, err := c.Checks.CreateCheckRun(ctx, "acme", "infra", github.CreateCheckRunOptions{Name: "x", HeadSHA: head,
				Actions: []*github.CheckRunAction{action(strings.Repeat("i", 21))}})
			return r, err
		}, 422},
		{"summary of 65,536 bytes", func() (*github.Response, error) {
			_, r, err := c.Checks.CreateCheckRun(ctx, "acme", "infra", github.CreateCheckRunOptions{Name: "x", HeadSHA: head,
				Output: &github.CheckRunOutput{Title: github.String("t"), Summary: github.String(strings.Repeat("é", 32768))}})
			return r, err
		}, 422},
		{"comment of 65,537", func() (*github.Response, error) {
			_, r, err := c.Issues.CreateComment(ctx, "acme", "infra", pr, &github.IssueComment{Body: github.String(strings.Repeat("x", 65537))})
			return r, err
		}, 422},
		{"unknown reaction", func() (*github.Response, error) {
			id := repo.AddComment(pr, "bob", "hi")
			_, r, err := c.Reactions.CreateIssueCommentReaction(ctx, "acme", "infra", id, "thumbsup")
			return r, err
		}, 422},
		{"unknown route", func() (*github.Response, error) {
			req, _ := c.NewRequest("GET", "repos/acme/infra/layers", nil)
			return c.Do(ctx, req, nil)
		}, 404},
		{"wrong method", func() (*github.Response, error) {
			req, _ := c.NewRequest("DELETE", "repos/acme/infra/check-runs/1", nil)
			return c.Do(ctx, req, nil)
		}, 404},
	}
	for _, tc := range cases {
		before := len(srv.Violations())
		resp, err := tc.do()
		if err == nil || resp == nil || resp.StatusCode != tc.want {
			t.Errorf("%s: got %v, want status %d", tc.name, err, tc.want)
		}
		if len(srv.Violations()) != before+1 {
			t.Errorf("%s: not recorded as a violation", tc.name)
		}
	}
	if len(rec.errors) != len(cases) {
		t.Errorf("t.Errorf called %d times, want %d", len(rec.errors), len(cases))
	}
	// A comment of exactly 65,536 characters is fine.
	if _, _, err := c.Issues.CreateComment(ctx, "acme", "infra", pr, &github.IssueComment{Body: github.String(strings.Repeat("x", 65536))}); err != nil {
		t.Errorf("65,536 characters: %v", err)
	}
}
