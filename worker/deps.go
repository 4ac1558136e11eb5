// Package worker runs Strata's durable jobs: it fetches the tree at the exact
// commit, calls the engine and reports to GitHub. Handlers decide; workers do.
package worker

import (
	"context"
	"fmt"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/queue"
	"strata.dev/strata/redact"
	"strata.dev/strata/report"
	"strata.dev/strata/source"
	"strata.dev/strata/store"
)

// Enqueuer inserts follow-up jobs.
type Enqueuer interface {
	Enqueue(ctx context.Context, args river.JobArgs, opts *river.InsertOpts) (int64, error)
}

// Deps is what workers share.
type Deps struct {
	Config   *config.Server
	Clients  githubapp.ClientCreator
	Queue    Enqueuer
	Fetcher  *source.Fetcher
	Redactor *redact.Redactor
	// Store is the database: locks, plans, runs.
	Store *store.Store
	// BotLogin is the App's own login, "slug[bot]".
	BotLogin string
	Logger   zerolog.Logger
}

// Register adds every worker to the River worker set.
func Register(w *river.Workers, d *Deps) {
	river.AddWorker(w, &CommandWorker{d: d})
	river.AddWorker(w, &InterruptedWorker{d: d})
	river.AddWorker(w, &PullRequestWorker{d: d})
	river.AddWorker(w, &PushWorker{d: d})
	registerLayers(w, d)
	registerSyncs(w, d)
	registerReleases(w, d)
}

// Reporter returns a reporter for the job's repository with an installation
// client, redacting everything it sends.
func (d *Deps) Reporter(r jobs.Repo) (*report.Reporter, error) {
	rest, err := d.Clients.NewInstallationClient(r.InstallationID)
	if err != nil {
		return nil, fmt.Errorf("installation client for %s: %w", r.FullName, err)
	}
	v4, err := d.Clients.NewInstallationV4Client(r.InstallationID)
	if err != nil {
		return nil, fmt.Errorf("installation GraphQL client for %s: %w", r.FullName, err)
	}
	return &report.Reporter{REST: rest, V4: v4, Owner: r.Owner, Repo: r.Name, Redact: d.Redactor.String}, nil
}

// Client returns the installation's REST client.
func (d *Deps) Client(r jobs.Repo) (*github.Client, error) {
	c, err := d.Clients.NewInstallationClient(r.InstallationID)
	if err != nil {
		return nil, fmt.Errorf("installation client for %s: %w", r.FullName, err)
	}
	return c, nil
}

// Policies declares how each job kind is recovered when its process dies;
// kinds not listed are retried.
var Policies = map[string]queue.Policy{}

// PeriodicJobs are enqueued by the queue's leader on a schedule (and at
// start-up with RunOnStart); features append theirs when registering.
var PeriodicJobs []*river.PeriodicJob
