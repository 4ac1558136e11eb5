package githubtest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestPayloadBuildersValidate(t *testing.T) {
	srv := NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	fork := srv.AddFork(repo, "alice")
	fork.Commit("feature", map[string]string{"a.tf": "x"}, "a")
	pr := repo.OpenPR("alice:feature", "main", "alice")
	issue := repo.OpenIssue("bug", "bob")
	before := repo.Branch("main")
	repo.Commit("main", map[string]string{"b.tf": "y"}, "b")
	type built struct {
		name    string
		payload Payload
		event   string
	}
	var cases []built
	add := func(name string, p Payload, e string) { cases = append(cases, built{name, p, e}) }
	p, e := repo.IssueCommentEvent(pr.Number, "bob", "/plan")
	add("comment on PR", p, e)
	cid := p["comment"].(map[string]any)["id"].(int64)
	p, e = repo.IssueCommentEvent(issue, "bob", "/plan")
	add("comment on issue", p, e)
	p, e = repo.IssueCommentEditedEvent(cid, "/apply")
	add("comment edited", p, e)
	for _, a := range []string{"opened", "synchronize", "reopened"} {
		p, e = repo.PullRequestEvent(a, pr.Number)
		add("pull request "+a, p, e)
	}
	rid := repo.AddReview(pr.Number, "carol", "APPROVED")
	p, e = repo.PullRequestReviewEvent(pr.Number, rid)
	add("review", p, e)
	p, e = repo.PushEvent("main", before, "")
	add("push", p, e)
	p, e = repo.PushEvent("main", "", "")
	add("push created", p, e)

	head := pr.HeadSHA()
	srv.mu.Lock()
	cr := &checkRun{CheckRun{ID: srv.id(), HeadSHA: head, Name: "strata/plan: network", Status: "completed", Conclusion: "success",
		Actions: []CheckRunAction{{Label: "Apply", Description: "Apply", Identifier: "apply"}}, StartedAt: now(), CompletedAt: now()}}
	repo.checkRuns = append(repo.checkRuns, cr)
	srv.mu.Unlock()
	p, e = repo.CheckRunEvent("requested_action", cr.ID, "apply", "bob")
	add("check run requested action", p, e)
	p, e = repo.CheckRunEvent("rerequested", cr.ID, "", "bob")
	add("check run rerequested", p, e)
	repo.ClosePR(pr.Number, true)
	p, e = repo.PullRequestEvent("closed", pr.Number)
	add("pull request closed merged", p, e)

	for _, c := range cases {
		if err := ValidateWebhook(c.event, c.payload); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestDeliverSigns(t *testing.T) {
	srv := NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	var got http.Header
	var body []byte
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		body, _ = io.ReadAll(r.Body)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer hook.Close()
	p, e := repo.PushEvent("main", "", "")
	resp := Deliver(t, hook.URL, "s3cret", e, "d-1", p)
	resp.Body.Close()
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write(body)
	if got.Get("X-Hub-Signature-256") != "sha256="+hex.EncodeToString(mac.Sum(nil)) || got.Get("X-GitHub-Event") != "push" || got.Get("X-GitHub-Delivery") != "d-1" {
		t.Errorf("headers = %v", got)
	}
	rec := &recordingTB{TB: t}
	resp = Deliver(rec, hook.URL, "s3cret", "push", "d-2", Payload{"ref": "refs/heads/main"})
	resp.Body.Close()
	if len(rec.errors) != 1 {
		t.Errorf("an invalid payload was not refused: %v", rec.errors)
	}
}
