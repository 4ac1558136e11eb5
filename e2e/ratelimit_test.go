package e2e

import (
	"bufio"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/githubtest"
)

// GitHub is unhappy during a /plan: the 👀, the creation of the plan check,
// its first update and the plan comment each hit a secondary rate limit;
// the read of the PR answers 502; the limit runs out at the read of its
// files. Strata waits, retries, and ends with exactly one of each:
// reaction, lock check, plan check, plan comment. The waits are on the
// fake's clock, which Strata's waits move: the test waits out no limit.
func TestLayersPlanSurvivesRateLimits(t *testing.T) {
	clock := githubtest.NewClock()
	e := startLayers(t, apptest.Options{GitHubClock: clock}, map[string]int{network: 1}, nil)
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	head := pr.HeadSHA()
	gh, repo := e.GitHub, "/repos/acme/infra"

	gh.SecondaryLimitNext("POST", "/reactions", 1)
	gh.FailNext("GET", repo+"/pulls/1", http.StatusBadGateway)
	gh.ExhaustRateLimitBefore("GET", repo+"/pulls/1/files", time.Second)
	gh.SecondaryLimitNext("POST", repo+"/check-runs", 1, `"name":"`+networkPlan+`"`)
	gh.SecondaryLimitNext("PATCH", repo+"/check-runs/", 1)
	gh.SecondaryLimitNext("POST", repo+"/issues/1/comments", 1)

	e.comment(pr.Number, "alice", "/plan")
	plan := e.completed(head, networkPlan)
	if plan.Conclusion != "success" || plan.Title != "2 to add, 0 to change, 0 to destroy" {
		t.Fatalf("plan check = %s %q, want success with 2 to add", plan.Conclusion, plan.Title)
	}
	e.commentWith(pr.Number, "Terraform plan:")

	if got := e.checksNamed(head, networkPlan); len(got) != 1 {
		t.Errorf("%d plan checks, want 1", len(got))
	}
	if got := e.checksNamed(head, networkLock); len(got) != 1 {
		t.Errorf("%d lock checks, want 1", len(got))
	}
	comments := e.Repo.Comments(pr.Number)
	plans := 0
	for _, c := range comments {
		if strings.Contains(c.Body, "Terraform plan:") {
			plans++
		}
	}
	if plans != 1 || len(comments) != 2 {
		t.Errorf("%d plan comments of %d comments, want 1 besides the /plan", plans, len(comments))
	}
	if r := e.Repo.Reactions(comments[0].ID); len(r) != 1 || r[0].Content != "eyes" {
		t.Errorf("reactions on /plan = %+v, want one 👀", r)
	}

	// Every fault was met, and each refused request was sent again.
	var limited []string
	for _, r := range gh.Limited() {
		limited = append(limited, r.Method+" "+strings.TrimPrefix(r.Path, "/api/v3"))
	}
	for _, want := range []string{"POST " + repo + "/issues/comments/", "GET " + repo + "/pulls/1/files",
		"POST " + repo + "/check-runs", "PATCH " + repo + "/check-runs/", "POST " + repo + "/issues/1/comments"} {
		if !slices.ContainsFunc(limited, func(r string) bool { return strings.HasPrefix(r, want) }) {
			t.Errorf("%s... was never refused; limited: %v", want, limited)
		}
	}
	if f := gh.Failed(); len(f) != 1 || f[0].Path != "/api/v3"+repo+"/pulls/1" {
		t.Errorf("failed = %+v, want the read of the PR", f)
	}
	// Strata waited, on the clock, at least what GitHub asked: 1 s after
	// each of the four secondary limits, and the primary limit's reset
	// (whole seconds, at least 1 s later).
	if waited := clock.Waited(); waited < 5*time.Second {
		t.Errorf("Strata waited %v in all, want at least 5s", waited)
	}
	retries := githubRetries(t, e.Server.MetricsAddr())
	if retries["secondary_rate_limit"] != 4 || retries["primary_rate_limit"] < 1 || retries["server_error"] != 1 {
		t.Errorf("strata_github_retries_total = %v, want 4 secondary, 1 server error, a primary", retries)
	}
	noViolations(t, e.GitHub)
}

// githubRetries reads strata_github_retries_total by reason from /metrics.
func githubRetries(t *testing.T, addr string) map[string]float64 {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), `strata_github_retries_total{reason="`)
		if !ok {
			continue
		}
		reason, value, _ := strings.Cut(rest, `"} `)
		out[reason], _ = strconv.ParseFloat(value, 64)
	}
	return out
}

// An installation out of requests for longer than a job may wait does not
// lose the command: the /help job is refused by GitHub's limit at its
// reply, waits for the reset without spending an attempt, and answers once
// when it comes. Before, the limit cost the job an attempt (and go-github,
// which then remembers the limit, refused the retry locally): a burst of
// comments was discarded after three tries, unanswered.
func TestACommandWaitsOutAnExhaustedRateLimit(t *testing.T) {
	env := apptest.Start(t, apptest.Options{Configure: func(c *config.Server) {
		c.GitHub.MaxWait = 100 * time.Millisecond // a request waits no longer for a limit
	}})
	pr := openPR(env)
	// The limit runs out at the reply, and resets 2 s later: 20 times what
	// the request may wait. The fake's clock is the real one here: River's
	// snooze waits on it.
	env.GitHub.ExhaustRateLimitBefore("POST", "/repos/acme/infra/issues/1/comments", 2*time.Second)

	payload, event := env.Repo.IssueCommentEvent(pr.Number, "alice", "/help")
	commentID := payload["comment"].(map[string]any)["id"].(int64)
	start := time.Now()
	env.Deliver(payload, event)
	bot := env.GitHub.BotLogin()
	env.WaitFor(30*time.Second, func() bool { return len(comments(env.Repo, pr.Number, bot)) >= 1 })
	t.Logf("answered %.1fs after the comment", time.Since(start).Seconds())
	env.WaitIdle(30 * time.Second)

	if got := comments(env.Repo, pr.Number, bot); len(got) != 1 || !strings.Contains(got[0].Body, "/plan") {
		t.Fatalf("replies = %+v, want one /help reply", got)
	}
	if r := env.Repo.Reactions(commentID); len(r) != 1 || r[0].Content != "eyes" {
		t.Errorf("reactions on /help = %+v, want one 👀", r)
	}
	limited := false
	for _, r := range env.GitHub.Limited() {
		limited = limited || (r.Method == "POST" && strings.HasSuffix(r.Path, "/issues/1/comments"))
	}
	if !limited {
		t.Fatalf("the reply was never refused for the limit: %+v", env.GitHub.Limited())
	}
	// The job waited (River's snooze) rather than failing an attempt.
	st := env.Server.Store()
	var attempt int
	var noErrors bool
	if err := st.DB().QueryRowContext(t.Context(), st.Rebind(`SELECT attempt, errors IS NULL FROM river_job WHERE kind = ?`), "command").
		Scan(&attempt, &noErrors); err != nil {
		t.Fatal(err)
	}
	if attempt != 1 || !noErrors {
		t.Fatalf("the command job finished at attempt %d (errors recorded: %v), want attempt 1 and none", attempt, !noErrors)
	}
}
