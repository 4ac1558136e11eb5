package e2e

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"strata.dev/strata/apptest"
	"strata.dev/strata/githubtest"
)

// evilValue closes a single-backtick code span and goes on as Markdown: an
// image (fetched by every reader's browser), a link, and a mention that
// notifies a team.
const evilValue = "x` ![img](https://evil/x.png) [link](https://evil) @acme/admins `"

// brokenConfig is a PR's .strata.yaml that cannot be used: its layer name
// is evilValue and its dir does not exist.
const brokenConfig = "version: 1\nlayers:\n  - name: \"" + evilValue + "\"\n    dir: nowhere\n"

// The attack: a stranger (no permission) and a reader (a fork's author on a
// public repository) comment /plan on a PR whose .strata.yaml is broken.
// Before any of it, the permission table says no: no 👀, no read of the PR
// or its config, no word about the config; the stranger hears nothing, the
// reader gets the refusal alone. The control: a writer's /plan on the same
// PR gets the 👀 and the config's errors.
func TestCommandsAreAuthorizedFirst(t *testing.T) {
	env := apptest.Start(t, apptest.Options{})
	env.Repo.Commit("main", repoFiles, "infra")
	env.Repo.Commit("broken", map[string]string{".strata.yaml": brokenConfig}, "Break the config")
	pr := env.Repo.OpenPR("broken", "main", "alice")
	env.Repo.SetPermission("stranger", "none")
	env.Repo.SetPermission("reader", "read")
	bot := env.GitHub.BotLogin()
	// The server's own discovery of repositories for drift reads their
	// config once at start: let it finish, so that what follows is the
	// comments' cost alone.
	env.WaitFor(20*time.Second, func() bool {
		return slices.ContainsFunc(env.GitHub.Requests(), func(r githubtest.Request) bool {
			return strings.HasSuffix(r.Path, "/contents/.strata.yaml")
		})
	})
	env.WaitIdle(20 * time.Second)
	permission := func(user string) string {
		return "GET /api/v3/repos/" + env.Repo.FullName() + "/collaborators/" + user + "/permission"
	}
	comment := "POST /api/v3/repos/" + env.Repo.FullName() + "/issues/" + strconv.Itoa(pr.Number) + "/comments"

	for _, tc := range []struct {
		user  string
		calls []string // the repository's API calls the comment cost
		reply string   // "" for none
	}{
		{"stranger", []string{permission("stranger")}, ""},
		{"reader", []string{permission("reader"), comment},
			"@reader `/plan` refused: @reader has read permission on this repository; `/plan` needs write or higher."},
	} {
		before := len(env.GitHub.Requests())
		replies := len(comments(env.Repo, pr.Number, bot))
		payload, event := env.Repo.IssueCommentEvent(pr.Number, tc.user, "/plan")
		env.Deliver(payload, event)
		env.WaitIdle(20 * time.Second)

		if got := repoCalls(env.GitHub.Requests()[before:]); !slices.Equal(got, tc.calls) {
			t.Errorf("%s's /plan cost %q, want %q", tc.user, got, tc.calls)
		}
		if r := env.Repo.Reactions(commentID(payload)); len(r) != 0 {
			t.Errorf("%s's /plan got reactions %+v", tc.user, r)
		}
		var got []string
		for _, c := range comments(env.Repo, pr.Number, bot)[replies:] {
			got = append(got, c.Body)
		}
		var want []string
		if tc.reply != "" {
			want = []string{tc.reply}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s's /plan got replies %q, want %q", tc.user, got, want)
		}
	}

	replies := len(comments(env.Repo, pr.Number, bot))
	payload, event := env.Repo.IssueCommentEvent(pr.Number, "alice", "/plan")
	env.Deliver(payload, event)
	env.WaitFor(20*time.Second, func() bool { return len(comments(env.Repo, pr.Number, bot)) > replies })
	if got := lastComment(env.Repo, pr.Number, bot); !strings.Contains(got, "Strata could not use") {
		t.Errorf("the writer's /plan got %q, want the config's errors", got)
	}
	if r := env.Repo.Reactions(commentID(payload)); len(r) != 1 || r[0].Content != "eyes" {
		t.Errorf("the writer's /plan got reactions %+v, want one 👀", r)
	}
	noViolations(t, env.GitHub)
}

// The attack: a PR's .strata.yaml names a layer with a value that closes
// the code span the config error quotes it in. The comment that shows the
// error renders no image, link or mention, and still shows the value.
func TestConfigErrorsQuoteThePRsValues(t *testing.T) {
	env := apptest.Start(t, apptest.Options{})
	env.Repo.Commit("main", repoFiles, "infra")
	env.Repo.Commit("broken", map[string]string{".strata.yaml": brokenConfig}, "Break the config")
	pr := env.Repo.OpenPR("broken", "main", "alice")
	bot := env.GitHub.BotLogin()

	env.Deliver(env.Repo.IssueCommentEvent(pr.Number, "alice", "/plan"))
	env.WaitFor(20*time.Second, func() bool { return strings.Contains(lastComment(env.Repo, pr.Number, bot), "could not use") })
	body := lastComment(env.Repo, pr.Number, bot)
	r := renderMarkdown(body)
	if r.images+r.links != 0 || strings.Contains(r.text, "@acme/admins") {
		t.Errorf("the config error renders %d images, %d links, text %q:\n%s", r.images, r.links, r.text, body)
	}
	if !slices.ContainsFunc(r.code, func(c string) bool { return strings.Contains(c, evilValue) }) {
		t.Errorf("no code span shows the value %q: %q", evilValue, r.code)
	}
	noViolations(t, env.GitHub)
}

// rendered is what a comment's Markdown becomes, read as GitHub does
// (CommonMark with its extensions): images, links (autolinks of bare
// addresses included), the text outside code (where @team notifies), and
// the code spans.
type rendered struct {
	images, links int
	text          string
	code          []string
}

func renderMarkdown(md string) rendered {
	src := []byte(md)
	root := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	var r rendered
	var plain strings.Builder
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Image:
			r.images++
		case *ast.Link, *ast.AutoLink:
			r.links++
		case *ast.CodeSpan:
			var b strings.Builder
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					b.Write(t.Segment.Value(src))
				}
			}
			r.code = append(r.code, b.String())
			return ast.WalkSkipChildren, nil
		case *ast.Text:
			plain.Write(n.Segment.Value(src))
			plain.WriteByte(' ')
		}
		return ast.WalkContinue, nil
	})
	r.text = plain.String()
	return r
}

// repoCalls are the calls to the repository's API, "METHOD path", leaving
// out the App's own (its installation token).
func repoCalls(reqs []githubtest.Request) []string {
	var out []string
	for _, r := range reqs {
		if strings.Contains(r.Path, "/repos/") {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

func commentID(payload githubtest.Payload) int64 {
	return payload["comment"].(map[string]any)["id"].(int64)
}

func lastComment(repo *githubtest.Repo, pr int, by string) string {
	cs := comments(repo, pr, by)
	if len(cs) == 0 {
		return ""
	}
	return cs[len(cs)-1].Body
}
