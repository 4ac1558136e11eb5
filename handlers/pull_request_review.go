package handlers

import (
	"context"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"
)

// PullRequestReview refreshes a PR's apply readiness when it is approved or
// an approval is dismissed: `approved` is checked again at /apply, but
// strata/applied should not wait for that to change.
type PullRequestReview struct{ Base }

func (h *PullRequestReview) Handles() []string { return []string{"pull_request_review"} }

func (h *PullRequestReview) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event github.PullRequestReviewEvent
	if err := decode("pull_request_review", payload, &event); err != nil {
		return err
	}
	if event.GetAction() != "submitted" && event.GetAction() != "dismissed" {
		return nil
	}
	ctx, _ = githubapp.PreparePRContext(ctx, event.GetInstallation().GetID(), event.GetRepo(), event.GetPullRequest().GetNumber())
	return h.enqueue(ctx, eventType, deliveryID,
		pullRequestJob(event.GetInstallation(), event.GetRepo(), event.GetPullRequest(), "reviewed", event.GetSender()))
}

var _ githubapp.EventHandler = &PullRequestReview{}
