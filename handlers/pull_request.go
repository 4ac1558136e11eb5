package handlers

import (
	"context"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/jobs"
)

// PullRequest hands PR lifecycle events to the features as one job.
type PullRequest struct{ Base }

func (h *PullRequest) Handles() []string { return []string{"pull_request"} }

func (h *PullRequest) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event github.PullRequestEvent
	if err := decode("pull_request", payload, &event); err != nil {
		return err
	}
	switch event.GetAction() {
	case "opened", "reopened", "synchronize", "closed":
	default:
		return nil
	}
	ctx, _ = githubapp.PreparePRContext(ctx, event.GetInstallation().GetID(), event.GetRepo(), event.GetPullRequest().GetNumber())
	job := pullRequestJob(event.GetInstallation(), event.GetRepo(), event.GetPullRequest(), event.GetAction(), event.GetSender())
	job.BeforeSHA = event.GetBefore()
	return h.enqueue(ctx, eventType, deliveryID, job)
}

// pullRequestJob describes a PR event for the features.
func pullRequestJob(inst *github.Installation, repo *github.Repository, pr *github.PullRequest, action string, sender *github.User) jobs.PullRequest {
	return jobs.PullRequest{
		Repo:          repoOf(inst, repo),
		PR:            pr.GetNumber(),
		Action:        action,
		HeadSHA:       pr.GetHead().GetSHA(),
		HeadRef:       pr.GetHead().GetRef(),
		BaseRef:       pr.GetBase().GetRef(),
		BaseSHA:       pr.GetBase().GetSHA(),
		Fork:          pr.GetHead().GetRepo().GetID() != repo.GetID(),
		Merged:        pr.GetMerged(),
		MergeSHA:      mergeSHA(pr),
		MergedAt:      pr.GetMergedAt().Time,
		Author:        pr.GetUser().GetLogin(),
		Sender:        sender.GetLogin(),
		DefaultBranch: repo.GetDefaultBranch(),
	}
}

// mergeSHA is the merge commit of a merged PR (GitHub also fills
// merge_commit_sha with a test merge of an open one).
func mergeSHA(pr *github.PullRequest) string {
	if !pr.GetMerged() {
		return ""
	}
	return pr.GetMergeCommitSHA()
}

var _ githubapp.EventHandler = &PullRequest{}
