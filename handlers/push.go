package handlers

import (
	"context"
	"sort"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/jobs"
)

// Push hands pushes to the default branch to the features (hydration).
type Push struct{ Base }

func (h *Push) Handles() []string { return []string{"push"} }

// pushCommitLimit is how many commits GitHub lists in a push payload; a
// larger push lists none of the rest, so its changed files are unknown.
const pushCommitLimit = 20

func (h *Push) Handle(ctx context.Context, eventType, deliveryID string, payload []byte) error {
	var event github.PushEvent
	if err := decode("push", payload, &event); err != nil {
		return err
	}
	repo := event.GetRepo()
	if event.GetRef() != "refs/heads/"+repo.GetDefaultBranch() || event.GetDeleted() {
		return nil
	}
	var changed []string
	if len(event.Commits) < pushCommitLimit {
		set := map[string]bool{}
		for _, c := range event.Commits {
			for _, list := range [][]string{c.Added, c.Modified, c.Removed} {
				for _, f := range list {
					set[f] = true
				}
			}
		}
		for f := range set {
			changed = append(changed, f)
		}
		sort.Strings(changed)
	}
	ctx, _ = githubapp.PrepareRepoContext(ctx, event.GetInstallation().GetID(), &github.Repository{
		Name: repo.Name, Owner: &github.User{Login: repo.GetOwner().Login},
	})
	return h.enqueue(ctx, eventType, deliveryID, jobs.Push{
		Repo:          jobs.NewRepo(event.GetInstallation().GetID(), repo.GetOwner().GetLogin(), repo.GetName()),
		Ref:           event.GetRef(),
		Before:        event.GetBefore(),
		After:         event.GetAfter(),
		DefaultBranch: repo.GetDefaultBranch(),
		Changed:       changed,
	})
}

var _ githubapp.EventHandler = &Push{}
