package handlers

import (
	"context"
	"encoding/json"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/command"
	"strata.dev/strata/jobs"
)

// IssueComment turns a PR comment that is a Strata command into a command job.
type IssueComment struct{ Base }

func (h *IssueComment) Handles() []string { return []string{"issue_comment"} }

func (h *IssueComment) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event github.IssueCommentEvent
	if err := json.Unmarshal(payload, &event); err != nil {
		return &PayloadError{Event: "issue_comment", Err: err}
	}
	// Only new comments on PRs, by people: edits don't re-run commands.
	if event.GetAction() != "created" || !event.GetIssue().IsPullRequest() || h.isBot(event.GetComment().GetUser()) {
		return nil
	}
	body := event.GetComment().GetBody()
	cmd, err := command.Parse(body)
	if cmd == nil && err == nil {
		return nil // not a Strata command
	}
	ctx, logger := githubapp.PreparePRContext(ctx, event.GetInstallation().GetID(), event.GetRepo(), event.GetIssue().GetNumber())
	logger.Debug().Msg("enqueue command")
	return h.enqueue(ctx, eventType, deliveryID, jobs.Command{
		Repo:      repoOf(event.GetInstallation(), event.GetRepo()),
		PR:        event.GetIssue().GetNumber(),
		CommentID: event.GetComment().GetID(),
		User:      event.GetComment().GetUser().GetLogin(),
		Body:      body,
	})
}

var _ githubapp.EventHandler = &IssueComment{}
