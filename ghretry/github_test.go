package ghretry_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"

	"strata.dev/strata/ghretry"
	"strata.dev/strata/githubtest"
)

// client is a go-github client for the fake's installation, with the
// middleware where go-githubapp puts it: outside the token transport.
func client(t *testing.T, srv *githubtest.Server, opts ghretry.Options) *github.Client {
	t.Helper()
	itr, err := ghinstallation.New(http.DefaultTransport, srv.AppID(), srv.InstallationID(), srv.PrivateKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	itr.BaseURL = strings.TrimSuffix(srv.APIURL(), "/")
	c, err := github.NewClient(&http.Client{Transport: ghretry.New(itr, opts)}).WithEnterpriseURLs(srv.APIURL(), srv.APIURL())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func setup(t *testing.T) (*githubtest.Server, *githubtest.Repo, int) {
	srv := githubtest.NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	repo.Commit("feature", map[string]string{"a.tf": "x"}, "a")
	return srv, repo, repo.OpenPR("feature", "main", "alice").Number
}

// fastClock moves on instead of sleeping: the fake's secondary limits and
// faults refuse one request, whenever it comes.
type fastClock struct {
	offset time.Duration
	waits  []time.Duration
}

func (c *fastClock) now() time.Time { return time.Now().Add(c.offset) }

func (c *fastClock) sleep(_ context.Context, d time.Duration) error {
	c.offset += d
	c.waits = append(c.waits, d)
	return nil
}

// Creates refused by a secondary limit are created once; a GET answered
// 502 is read again; a create answered 502 is not sent again.
func TestAgainstFakeGitHub(t *testing.T) {
	srv, repo, pr := setup(t)
	var clock fastClock
	c := client(t, srv, ghretry.Options{Now: clock.now, Sleep: clock.sleep})
	ctx := context.Background()

	srv.SecondaryLimitNext("POST", "/comments", 3)
	srv.SecondaryLimitNext("POST", "/check-runs", 3)
	comment, _, err := c.Issues.CreateComment(ctx, "acme", "infra", pr, &github.IssueComment{Body: github.String("plan")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Checks.CreateCheckRun(ctx, "acme", "infra", github.CreateCheckRunOptions{Name: "strata/plan: a", HeadSHA: repo.Branch("feature")}); err != nil {
		t.Fatal(err)
	}
	if n := len(repo.Comments(pr)); n != 1 {
		t.Errorf("%d comments, want 1", n)
	}
	if n := len(repo.CheckRuns(repo.Branch("feature"))); n != 1 {
		t.Errorf("%d check runs, want 1", n)
	}
	if len(srv.Limited()) != 2 || len(clock.waits) != 2 || clock.waits[0] < 2*time.Second || clock.waits[0] > 3*time.Second {
		t.Errorf("limited %v, waits %v", srv.Limited(), clock.waits)
	}

	srv.FailNext("GET", "/comments/", 502)
	if got, _, err := c.Issues.GetComment(ctx, "acme", "infra", comment.GetID()); err != nil || got.GetBody() != "plan" {
		t.Fatalf("GET after a 502: %v, %v", got, err)
	}

	srv.FailNext("POST", "/comments", 502)
	if _, resp, err := c.Issues.CreateComment(ctx, "acme", "infra", pr, &github.IssueComment{Body: github.String("again")}); err == nil || resp.StatusCode != 502 {
		t.Fatalf("POST answered 502: %v, want the 502 back", err)
	}
	if n := len(srv.Failed()); n != 2 {
		t.Errorf("failed %d requests, want the GET and the POST once each", n)
	}
	if n := len(repo.Comments(pr)); n != 1 {
		t.Errorf("%d comments, want 1", n)
	}
}

// An exhausted primary limit is waited out (real clock: the fake resets
// within a second or two), and the answer that used it up comes back only
// after the reset, so go-github does not refuse the next request itself.
func TestPrimaryLimitAgainstFakeGitHub(t *testing.T) {
	srv, repo, pr := setup(t)
	var retries []ghretry.Reason
	c := client(t, srv, ghretry.Options{OnRetry: func(_ *http.Request, r ghretry.Reason, _ time.Duration) { retries = append(retries, r) }})
	ctx := context.Background()

	srv.SetRateLimit(0, 0)
	if _, _, err := c.PullRequests.Get(ctx, "acme", "infra", pr); err != nil {
		t.Fatalf("GET over the limit: %v", err)
	}
	if len(srv.Limited()) != 1 || len(retries) != 1 || retries[0] != ghretry.PrimaryRateLimit {
		t.Errorf("limited %v, retries %v", srv.Limited(), retries)
	}

	srv.SetRateLimit(1, 0)
	if _, resp, err := c.PullRequests.Get(ctx, "acme", "infra", pr); err != nil || resp.Rate.Remaining != 0 {
		t.Fatalf("last GET of the window: remaining %d, %v", resp.Rate.Remaining, err)
	}
	if _, _, err := c.Issues.CreateComment(ctx, "acme", "infra", pr, &github.IssueComment{Body: github.String("plan")}); err != nil {
		t.Fatalf("POST after the window: %v", err)
	}
	if len(srv.Limited()) != 1 || len(repo.Comments(pr)) != 1 {
		t.Errorf("limited %v, comments %d", srv.Limited(), len(repo.Comments(pr)))
	}
}
