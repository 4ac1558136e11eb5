// Package handlers turns GitHub webhooks into durable jobs: one file per
// event. A handler parses, filters, decides and enqueues; it never calls a
// tool or GitHub, so it answers within milliseconds.
package handlers

import (
	"context"
	"strings"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/riverqueue/river"

	"strata.dev/strata/jobs"
)

// Deliverer records a delivery and enqueues its jobs in one transaction.
type Deliverer interface {
	Deliver(ctx context.Context, deliveryID, event string, jobs ...river.JobArgs) (bool, error)
}

// Base is shared by all handlers.
type Base struct {
	Queue Deliverer
	// BotLogin is Strata's own login ("slug[bot]"); its comments are ignored.
	BotLogin string
}

// enqueue records the delivery with its jobs; a redelivery enqueues nothing.
func (b *Base) enqueue(ctx context.Context, event, deliveryID string, work ...river.JobArgs) error {
	if len(work) == 0 {
		return nil
	}
	_, err := b.Queue.Deliver(ctx, deliveryID, event, work...)
	return err
}

// isBot reports whether a user is a bot or Strata itself: bots talking to
// each other must not trigger runs.
func (b *Base) isBot(u *github.User) bool {
	login := u.GetLogin()
	return u.GetType() == "Bot" || strings.HasSuffix(login, "[bot]") || (b.BotLogin != "" && strings.EqualFold(login, b.BotLogin))
}

func repoOf(installation *github.Installation, r *github.Repository) jobs.Repo {
	return jobs.NewRepo(installation.GetID(), r.GetOwner().GetLogin(), r.GetName())
}

// All returns every handler, for the dispatcher.
func All(b Base) []githubapp.EventHandler {
	return []githubapp.EventHandler{
		&IssueComment{Base: b},
		&PullRequest{Base: b},
		&PullRequestReview{Base: b},
		&Push{Base: b},
		&CheckRun{Base: b},
		&MergeGroup{Base: b},
	}
}
