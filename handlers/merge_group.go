package handlers

import (
	"context"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/jobs"
)

// MergeGroup answers GitHub's merge queue: a group whose checks are
// requested gets `strata/applied` on its head (layers.mergeGroupWorker). A
// destroyed group needs nothing: its check was read-only, and the group's
// pull requests keep their own.
type MergeGroup struct{ Base }

func (h *MergeGroup) Handles() []string { return []string{"merge_group"} }

func (h *MergeGroup) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event github.MergeGroupEvent
	if err := decode("merge_group", payload, &event); err != nil {
		return err
	}
	g := event.GetMergeGroup()
	if event.GetAction() != "checks_requested" || g.GetHeadSHA() == "" {
		return nil
	}
	repo := event.GetRepo()
	ctx, _ = githubapp.PrepareRepoContext(ctx, event.GetInstallation().GetID(), repo)
	return h.enqueue(ctx, eventType, deliveryID, jobs.MergeGroup{
		Repo:    repoOf(event.GetInstallation(), repo),
		HeadSHA: g.GetHeadSHA(), HeadRef: g.GetHeadRef(), BaseSHA: g.GetBaseSHA(), BaseRef: g.GetBaseRef(),
		DefaultBranch: repo.GetDefaultBranch(),
	})
}

var _ githubapp.EventHandler = &MergeGroup{}
