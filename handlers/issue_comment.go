package handlers

import (
	"context"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/command"
	"strata.dev/strata/jobs"
)

// IssueComment turns a PR comment that is a Strata command into a command job.
type IssueComment struct{ Base }

func (h *IssueComment) Handles() []string { return []string{"issue_comment"} }

func (h *IssueComment) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event issueCommentEvent
	if err := decode("issue_comment", payload, &event); err != nil {
		return err
	}
	user := &github.User{Login: &event.Comment.User.Login, Type: &event.Comment.User.Type}
	// Only new comments on PRs, by people: edits don't re-run commands.
	if event.Action != "created" || event.Issue.PullRequest == nil || h.isBot(user) {
		return nil
	}
	cmd, err := command.Parse(event.Comment.Body)
	if cmd == nil && err == nil {
		return nil // not a Strata command
	}
	repo := &github.Repository{Name: &event.Repo.Name, Owner: &github.User{Login: &event.Repo.Owner.Login}}
	ctx, logger := githubapp.PreparePRContext(ctx, event.Installation.ID, repo, event.Issue.Number)
	logger.Debug().Msg("enqueue command")
	return h.enqueue(ctx, eventType, deliveryID, jobs.Command{
		Repo:      jobs.NewRepo(event.Installation.ID, event.Repo.Owner.Login, event.Repo.Name),
		PR:        event.Issue.Number,
		CommentID: event.Comment.ID,
		User:      event.Comment.User.Login,
		Body:      event.Comment.Body,
	})
}

// issueCommentEvent is what Handle reads of an issue_comment payload.
// Every comment on every pull request and issue of an installation comes
// through here, most of them not commands; decoding go-github's whole
// event (a repository of a hundred fields, the issue, the comment, their
// users: 384 allocations for a 10 kB payload) was a third of the server's
// CPU at 1,000 deliveries a second (docs/benchmarks.md, Webhook intake).
type issueCommentEvent struct {
	Action string `json:"action"`
	Issue  struct {
		Number int `json:"number"`
		// Present on a pull request's comments only.
		PullRequest *struct{} `json:"pull_request"`
	} `json:"issue"`
	Comment struct {
		ID   int64  `json:"id"`
		Body string `json:"body"`
		User struct {
			Login string `json:"login"`
			Type  string `json:"type"`
		} `json:"user"`
	} `json:"comment"`
	Repo struct {
		Name  string `json:"name"`
		Owner struct {
			Login string `json:"login"`
		} `json:"owner"`
	} `json:"repository"`
	Installation struct {
		ID int64 `json:"id"`
	} `json:"installation"`
}

var _ githubapp.EventHandler = &IssueComment{}
