package e2e

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// repoFiles is a repository with one layer, one sync and one release.
var repoFiles = map[string]string{
	".strata.yaml": `version: 1
layers:
  - name: network
    dir: infra/network
syncs:
  - name: dev
    source: deploy/overlays/dev
    dest: {branch: hydrated, path: dev}
releases:
  - name: api
    chart: charts/api
`,
	"infra/network/main.tf":                  "resource \"terraform_data\" \"vpc\" {}\n",
	"deploy/overlays/dev/kustomization.yaml": "resources: []\n",
	"charts/api/Chart.yaml":                  "apiVersion: v2\nname: api\nversion: 0.1.0\n",
	"charts/api/templates/configmap.yaml":    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: api}\n",
	"README.md":                              "infra\n",
}

// openPR commits the repository to main and opens PR #1 from a branch that
// changes the README.
func openPR(env *apptest.Env) *githubtest.PR {
	env.Repo.Commit("main", repoFiles, "infra")
	env.Repo.Commit("feature", map[string]string{"README.md": "infra v2\n"}, "docs")
	return env.Repo.OpenPR("feature", "main", "alice")
}

func comments(repo *githubtest.Repo, pr int, by string) []githubtest.Comment {
	var out []githubtest.Comment
	for _, c := range repo.Comments(pr) {
		if c.User == by {
			out = append(out, c)
		}
	}
	return out
}

// "/help on PR #1 gets 👀 and a reply listing the commands and this repo's
// layers, syncs and releases", on both databases.
func TestHelpOnAPullRequest(t *testing.T) {
	for _, d := range storetest.Dialects {
		t.Run(string(d), func(t *testing.T) {
			t.Parallel()
			env := apptest.Start(t, apptest.Options{Dialect: d})
			pr := openPR(env)

			payload, event := env.Repo.IssueCommentEvent(pr.Number, "alice", "/help")
			commentID := int64(payload["comment"].(map[string]any)["id"].(int64))
			env.Deliver(payload, event)

			bot := env.GitHub.BotLogin()
			env.WaitFor(20*time.Second, func() bool { return len(comments(env.Repo, pr.Number, bot)) == 1 })
			reply := comments(env.Repo, pr.Number, bot)[0].Body
			for _, want := range []string{"/plan", "/apply", "/unlock", "/takeover", "/release", "/helm-test", "network", "dev", "api"} {
				if !strings.Contains(reply, want) {
					t.Errorf("the /help reply does not mention %q:\n%s", want, reply)
				}
			}
			reactions := env.Repo.Reactions(commentID)
			if len(reactions) != 1 || reactions[0].Content != "eyes" {
				t.Fatalf("reactions on the command = %+v, want one 👀", reactions)
			}
		})
	}
}

// Comments by bots, edits, comments on plain issues and other bots' slash
// commands start nothing.
func TestCommentsThatAreNotCommands(t *testing.T) {
	env := apptest.Start(t, apptest.Options{})
	pr := openPR(env)
	issue := env.Repo.OpenIssue("a question", "alice")

	cases := []func() (githubtest.Payload, string){
		func() (githubtest.Payload, string) {
			return env.Repo.IssueCommentEvent(pr.Number, "renovate[bot]", "/help")
		},
		func() (githubtest.Payload, string) {
			return env.Repo.IssueCommentEvent(pr.Number, env.GitHub.BotLogin(), "/help")
		},
		func() (githubtest.Payload, string) { return env.Repo.IssueCommentEvent(issue, "alice", "/help") },
		func() (githubtest.Payload, string) { return env.Repo.IssueCommentEvent(pr.Number, "alice", "/lgtm") },
		func() (githubtest.Payload, string) {
			return env.Repo.IssueCommentEvent(pr.Number, "alice", "> /help\nquoted, not a command")
		},
		func() (githubtest.Payload, string) {
			p, _ := env.Repo.IssueCommentEvent(pr.Number, "alice", "thanks")
			id := p["comment"].(map[string]any)["id"].(int64)
			return env.Repo.IssueCommentEditedEvent(id, "/help")
		},
	}
	for _, c := range cases {
		p, ev := c()
		env.Deliver(p, ev)
	}
	// A real command afterwards proves the server was listening all along.
	p, ev := env.Repo.IssueCommentEvent(pr.Number, "alice", "/help")
	env.Deliver(p, ev)
	bot := env.GitHub.BotLogin()
	replies := func() int { return len(comments(env.Repo, pr.Number, bot)) - 1 } // less the one posted as Strata above
	env.WaitFor(20*time.Second, func() bool { return replies() >= 1 })
	env.WaitIdle(20 * time.Second)
	if n := replies(); n != 1 {
		t.Fatalf("Strata replied %d times on the PR, want once (only to the real command)", n)
	}
	if n := len(comments(env.Repo, issue, bot)); n != 0 {
		t.Fatalf("Strata replied on a plain issue")
	}
}

// A Strata command with bad arguments gets the usage back.
func TestBadArgumentsGetTheUsage(t *testing.T) {
	env := apptest.Start(t, apptest.Options{})
	pr := openPR(env)
	p, ev := env.Repo.IssueCommentEvent(pr.Number, "alice", "/takeover dev soon")
	env.Deliver(p, ev)
	bot := env.GitHub.BotLogin()
	env.WaitFor(20*time.Second, func() bool { return len(comments(env.Repo, pr.Number, bot)) == 1 })
	reply := comments(env.Repo, pr.Number, bot)[0].Body
	if !strings.Contains(reply, "/takeover [SYNC] [DURATION]") || !strings.Contains(reply, "@alice") {
		t.Fatalf("reply to a bad /takeover:\n%s", reply)
	}
}

// A webhook without a valid signature is refused and starts nothing; a
// redelivery of the same delivery id is answered 2xx and starts nothing.
func TestSignaturesAndRedeliveries(t *testing.T) {
	env := apptest.Start(t, apptest.Options{Dialect: store.SQLite})
	pr := openPR(env)

	p, ev := env.Repo.IssueCommentEvent(pr.Number, "alice", "/help")
	for _, secret := range []string{"wrong-secret", ""} {
		res := deliverRaw(t, env, secret, ev, p)
		if res.StatusCode/100 != 4 {
			t.Fatalf("webhook signed with %q answered %d, want 4xx", secret, res.StatusCode)
		}
	}
	id := apptest.NewDeliveryID()
	env.DeliverID(id, p, ev)
	env.DeliverID(id, p, ev)
	bot := env.GitHub.BotLogin()
	env.WaitFor(20*time.Second, func() bool { return len(comments(env.Repo, pr.Number, bot)) == 1 })
	env.WaitIdle(20 * time.Second)
	if n := len(comments(env.Repo, pr.Number, bot)); n != 1 {
		t.Fatalf("%d replies after a delivery, a redelivery and two forged webhooks; want 1", n)
	}

	metrics := get(t, "http://"+env.Server.MetricsAddr()+"/metrics")
	for _, want := range []string{
		`strata_webhooks_total{event="issue_comment",outcome="invalid"} 2`,
		`strata_webhooks_total{event="issue_comment",outcome="accepted"} 2`,
		"strata_webhook_duration_seconds_count 4",
		`strata_jobs_total{kind="command",state="completed"} 1`,
		`strata_github_requests_total{method="POST",status="201"}`,
		`strata_github_rate_limit_remaining`,
	} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

func deliverRaw(t *testing.T, env *apptest.Env, secret, event string, payload any) *http.Response {
	t.Helper()
	if secret == "" {
		req, _ := http.NewRequest(http.MethodPost, env.HookURL, strings.NewReader(`{"zen":"x"}`))
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", apptest.NewDeliveryID())
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res
	}
	return githubtest.Deliver(t, env.HookURL, secret, event, apptest.NewDeliveryID(), payload)
}

func get(t *testing.T, url string) string {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, b)
	}
	return string(b)
}

// A broken .strata.yaml is reported on the PR with the file and line, and
// the command does nothing else.
func TestBrokenRepoConfigIsReported(t *testing.T) {
	env := apptest.Start(t, apptest.Options{})
	env.Repo.Commit("main", repoFiles, "infra")
	env.Repo.Commit("feature", map[string]string{".strata.yaml": "version: 1\nlayers:\n  - dir: infra/network\n    wen_modified: [\"*.tf\"]\n"}, "typo")
	pr := env.Repo.OpenPR("feature", "main", "alice")
	p, ev := env.Repo.IssueCommentEvent(pr.Number, "alice", "/help")
	env.Deliver(p, ev)
	bot := env.GitHub.BotLogin()
	env.WaitFor(20*time.Second, func() bool { return len(comments(env.Repo, pr.Number, bot)) == 1 })
	reply := comments(env.Repo, pr.Number, bot)[0].Body
	if !strings.Contains(reply, ".strata.yaml:4") || !strings.Contains(reply, "wen_modified") {
		t.Fatalf("reply does not name the file, line and key:\n%s", reply)
	}
}
