package handlers

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/jobs"
)

// PullRequest hands PR lifecycle events to the features as one job.
type PullRequest struct{ Base }

func (h *PullRequest) Handles() []string { return []string{"pull_request"} }

func (h *PullRequest) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event github.PullRequestEvent
	if err := json.Unmarshal(payload, &event); err != nil {
		return fmt.Errorf("parse pull_request payload: %w", err)
	}
	switch event.GetAction() {
	case "opened", "reopened", "synchronize", "closed":
	default:
		return nil
	}
	pr := event.GetPullRequest()
	ctx, _ = githubapp.PreparePRContext(ctx, event.GetInstallation().GetID(), event.GetRepo(), pr.GetNumber())
	return h.enqueue(ctx, eventType, deliveryID, jobs.PullRequest{
		Repo:          repoOf(event.GetInstallation(), event.GetRepo()),
		PR:            pr.GetNumber(),
		Action:        event.GetAction(),
		HeadSHA:       pr.GetHead().GetSHA(),
		BeforeSHA:     event.GetBefore(),
		HeadRef:       pr.GetHead().GetRef(),
		BaseRef:       pr.GetBase().GetRef(),
		BaseSHA:       pr.GetBase().GetSHA(),
		Fork:          pr.GetHead().GetRepo().GetID() != event.GetRepo().GetID(),
		Merged:        pr.GetMerged(),
		Author:        pr.GetUser().GetLogin(),
		Sender:        event.GetSender().GetLogin(),
		DefaultBranch: event.GetRepo().GetDefaultBranch(),
	})
}

var _ githubapp.EventHandler = &PullRequest{}
