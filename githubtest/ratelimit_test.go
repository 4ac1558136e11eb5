package githubtest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v60/github"
)

// Every answer says the installation's limit; after SetRateLimit(2, ...)
// the third request is refused without being performed, until the reset:
// a millisecond before it still refused, at it served.
func TestPrimaryRateLimitRunsOutAndResets(t *testing.T) {
	srv := NewServer(t)
	clock := NewClock()
	srv.SetClock(clock.Now)
	repo := srv.AddRepo("acme", "infra")
	repo.Commit("feature", map[string]string{"a.tf": "x"}, "a")
	pr := repo.OpenPR("feature", "main", "alice")
	// A go-github client refuses requests itself once it saw a limit; a
	// fresh client for each request sees the fake's answers.
	c := func() *github.Client { return clientFor(t, srv) }
	ctx := context.Background()

	_, resp, err := c().Repositories.Get(ctx, "acme", "infra")
	if err != nil || resp.Rate.Limit != 5000 || resp.Header.Get("X-RateLimit-Used") != strconv.Itoa(5000-resp.Rate.Remaining) {
		t.Fatalf("rate = %+v used %s, %v", resp.Rate, resp.Header.Get("X-RateLimit-Used"), err)
	}
	if until := resp.Rate.Reset.Time.Sub(clock.Now()); until < 58*time.Minute || until > time.Hour {
		t.Errorf("reset in %v, want the hour's window", until)
	}

	srv.SetRateLimit(2, time.Second)
	for want := 1; want >= 0; want-- {
		_, resp, err := c().PullRequests.Get(ctx, "acme", "infra", pr.Number)
		if err != nil || resp.Rate.Remaining != want {
			t.Fatalf("remaining = %d (%v), want %d", resp.Rate.Remaining, err, want)
		}
	}
	_, resp, err = c().Issues.CreateComment(ctx, "acme", "infra", pr.Number, &github.IssueComment{Body: github.String("hi")})
	var rle *github.RateLimitError
	if !errors.As(err, &rle) || resp.StatusCode != 403 || rle.Rate.Remaining != 0 {
		t.Fatalf("over the limit: %v (%T), want go-github's RateLimitError", err, err)
	}
	if !strings.Contains(rle.Message, "API rate limit exceeded for installation ID 5151") {
		t.Errorf("message = %q", rle.Message)
	}
	reset := rle.Rate.Reset.Time
	if until := reset.Sub(clock.Now()); until <= 0 || until > 2*time.Second {
		t.Errorf("reset in %v, want about a second", until)
	}
	if n := len(repo.Comments(pr.Number)); n != 0 {
		t.Errorf("%d comments: the refused request was performed", n)
	}
	if got := srv.Limited(); len(got) != 1 || got[0].Method != "POST" {
		t.Errorf("limited = %+v", got)
	}

	clock.Set(reset.Add(-time.Millisecond))
	if _, _, err := c().Issues.CreateComment(ctx, "acme", "infra", pr.Number, &github.IssueComment{Body: github.String("hi")}); !errors.As(err, &rle) {
		t.Fatalf("a millisecond before the reset: %v, want a RateLimitError", err)
	}
	clock.Set(reset)
	_, resp, err = c().Issues.CreateComment(ctx, "acme", "infra", pr.Number, &github.IssueComment{Body: github.String("hi")})
	if err != nil || resp.Rate.Remaining != 4999 {
		t.Fatalf("after the reset: remaining %d, %v", resp.Rate.Remaining, err)
	}
	if n := len(repo.Comments(pr.Number)); n != 1 {
		t.Errorf("%d comments, want 1", n)
	}
	if n := len(srv.Limited()); n != 2 {
		t.Errorf("limited %d requests, want 2 (both before the reset)", n)
	}
}

// SetRateLimit(0, ...) exhausts the limit at once; the App's own requests
// (JWT) do not count against the installation's.
func TestRateLimitCountsInstallationRequestsOnly(t *testing.T) {
	srv := NewServer(t)
	srv.AddRepo("acme", "infra")
	c := clientFor(t, srv) // its token is created on first use, by the App
	srv.SetRateLimit(0, time.Second)
	_, resp, err := c.Repositories.Get(context.Background(), "acme", "infra")
	var rle *github.RateLimitError
	if !errors.As(err, &rle) || resp.StatusCode != 403 {
		t.Fatalf("err = %v, want a RateLimitError", err)
	}
	if n := len(srv.Limited()); n != 1 {
		t.Errorf("limited %d requests, want 1", n)
	}
}

// A secondary limit refuses the next matching request, once, with
// Retry-After, and does not perform it; other methods pass.
func TestSecondaryLimitNext(t *testing.T) {
	srv := NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	repo.Commit("feature", map[string]string{"a.tf": "x"}, "a")
	pr := repo.OpenPR("feature", "main", "alice")
	c := clientFor(t, srv)
	ctx := context.Background()
	path := "/repos/acme/infra/issues/" + strconv.Itoa(pr.Number) + "/comments"

	srv.SecondaryLimitNext("POST", path, 7)
	if _, _, err := c.Issues.ListComments(ctx, "acme", "infra", pr.Number, nil); err != nil {
		t.Fatalf("GET passed a POST's limit: %v", err)
	}
	_, resp, err := c.Issues.CreateComment(ctx, "acme", "infra", pr.Number, &github.IssueComment{Body: github.String("plan")})
	var abuse *github.AbuseRateLimitError
	if !errors.As(err, &abuse) || resp.StatusCode != 403 || abuse.GetRetryAfter() != 7*time.Second {
		t.Fatalf("err = %v (%T), want go-github's AbuseRateLimitError with Retry-After 7s", err, err)
	}
	if !strings.Contains(abuse.Message, "secondary rate limit") {
		t.Errorf("message = %q", abuse.Message)
	}
	if n := len(repo.Comments(pr.Number)); n != 0 {
		t.Errorf("%d comments: the limited request was performed", n)
	}
	if got := srv.Limited(); len(got) != 1 || got[0].Path != "/api/v3"+path {
		t.Errorf("limited = %+v", got)
	}
	if len(srv.Failed()) != 0 {
		t.Errorf("failed = %+v, want the limit apart from FailNext's faults", srv.Failed())
	}
	// Only once. (A fresh client: c now refuses requests itself until the
	// Retry-After has passed.)
	if _, _, err := clientFor(t, srv).Issues.CreateComment(ctx, "acme", "infra", pr.Number, &github.IssueComment{Body: github.String("plan")}); err != nil {
		t.Fatalf("second POST: %v", err)
	}
}

// FailNext still answers a server error without performing the request.
func TestFailNextIsNotPerformed(t *testing.T) {
	srv := NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	repo.Commit("feature", map[string]string{"a.tf": "x"}, "a")
	pr := repo.OpenPR("feature", "main", "alice")
	c := clientFor(t, srv)
	srv.FailNext("POST", "/comments", 502)
	_, resp, err := c.Issues.CreateComment(context.Background(), "acme", "infra", pr.Number, &github.IssueComment{Body: github.String("plan")})
	if err == nil || resp.StatusCode != 502 {
		t.Fatalf("err = %v, want the 502", err)
	}
	if n := len(repo.Comments(pr.Number)); n != 0 || len(srv.Failed()) != 1 || len(srv.Limited()) != 0 {
		t.Errorf("comments %d, failed %v, limited %v", n, srv.Failed(), srv.Limited())
	}
}

// ExhaustRateLimitBefore runs the limit out at a chosen request, as other
// clients of the installation would: it and the ones after it are refused
// until the reset.
func TestExhaustRateLimitBefore(t *testing.T) {
	srv := NewServer(t)
	clock := NewClock()
	srv.SetClock(clock.Now)
	repo := srv.AddRepo("acme", "infra")
	repo.Commit("feature", map[string]string{"a.tf": "x"}, "a")
	pr := repo.OpenPR("feature", "main", "alice")
	c := func() *github.Client { return clientFor(t, srv) }
	ctx := context.Background()

	srv.ExhaustRateLimitBefore("GET", "/pulls/1", time.Second)
	if _, _, err := c().Repositories.Get(ctx, "acme", "infra"); err != nil {
		t.Fatalf("a request before the one named: %v", err)
	}
	_, _, err := c().PullRequests.Get(ctx, "acme", "infra", pr.Number)
	var rle *github.RateLimitError
	if !errors.As(err, &rle) {
		t.Fatalf("the named request: %v, want a RateLimitError", err)
	}
	if _, _, err := c().Repositories.Get(ctx, "acme", "infra"); !errors.As(err, &rle) {
		t.Fatalf("a request after it: %v, want a RateLimitError", err)
	}
	clock.Set(rle.Rate.Reset.Time)
	if _, _, err := c().PullRequests.Get(ctx, "acme", "infra", pr.Number); err != nil {
		t.Fatalf("after the reset: %v", err)
	}
	if n := len(srv.Limited()); n != 2 {
		t.Errorf("limited %d requests, want 2", n)
	}
}

// A fault may name part of the body, to pick one of several requests to
// the same path: here the second of two check runs created.
func TestFaultMatchesBody(t *testing.T) {
	srv := NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	sha := repo.Commit("main", map[string]string{"a.tf": "x"}, "a")
	ctx := context.Background()
	srv.SecondaryLimitNext("POST", "/check-runs", 1, `"name":"strata/plan: b"`)
	for _, name := range []string{"strata/plan: a", "strata/plan: b"} {
		_, _, err := clientFor(t, srv).Checks.CreateCheckRun(ctx, "acme", "infra", github.CreateCheckRunOptions{Name: name, HeadSHA: sha})
		var abuse *github.AbuseRateLimitError
		if limited := errors.As(err, &abuse); limited != (name == "strata/plan: b") {
			t.Errorf("%s: %v", name, err)
		}
	}
	if runs := repo.CheckRuns(sha); len(runs) != 1 || runs[0].Name != "strata/plan: a" {
		t.Errorf("check runs = %+v, want only a's", runs)
	}
}

// The fake's Clock moves by what a client waits, never back, and not for
// a wait whose context has ended.
func TestClockMovesByWaits(t *testing.T) {
	c := NewClock()
	start := c.Now()
	if err := c.Sleep(context.Background(), 1500*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	c.Set(start) // back: ignored
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ended, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("a wait with an ended context: %v, want context.Canceled", err)
	}
	if got := c.Now().Sub(start); got != 1500*time.Millisecond {
		t.Errorf("the clock moved %v, want 1.5s", got)
	}
	if got := c.Waited(); got != 1500*time.Millisecond {
		t.Errorf("Waited = %v, want 1.5s", got)
	}
}
