package layers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/riverqueue/river"

	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/worker"
)

// driftDiscoverEvery is how often every installed repository's default
// branch is read for drift settings: a push to a default branch is read
// at once (driftOnPush); this finds the repositories no push told Strata
// about (installed with drift already asked for), and forgets those the
// App no longer reaches.
const driftDiscoverEvery = 6 * time.Hour

var driftDiscoverPeriodic = worker.Periodic{ID: "drift_discover", Every: driftDiscoverEvery, AtStart: true, Args: jobs.DriftDiscover{}}

type driftDiscoverWorker struct {
	river.WorkerDefaults[jobs.DriftDiscover]
	d *worker.Deps
}

func (w *driftDiscoverWorker) Timeout(*river.Job[jobs.DriftDiscover]) time.Duration {
	return jobs.DriftDiscoverTimeout
}

func (w *driftDiscoverWorker) Work(ctx context.Context, job *river.Job[jobs.DriftDiscover]) error {
	d := w.d
	app, err := d.Clients.NewAppClient()
	if err != nil {
		return fmt.Errorf("GitHub App client: %w", err)
	}
	seen := map[string]bool{}
	var errs []error
	if err := pull.EachPage(func(opts *github.ListOptions) (*github.Response, error) {
		insts, resp, err := app.Apps.ListInstallations(ctx, opts)
		errs = append(errs, worker.Each(ctx, insts, func(ctx context.Context, inst *github.Installation) error {
			return w.installation(ctx, inst.GetID(), seen)
		}))
		return resp, err
	}); err != nil {
		return fmt.Errorf("list the App's installations: %w", err)
	}
	if err := errors.Join(errs...); err != nil {
		return err // what was not seen may only have failed to list
	}
	known, err := d.Store.DriftRepos(ctx)
	if err != nil {
		return err
	}
	var gone []string
	for _, repo := range known {
		if !seen[repo] {
			gone = append(gone, repo)
		}
	}
	return worker.Each(ctx, gone, func(ctx context.Context, repo string) error {
		return d.Store.SetDriftLayers(ctx, repo, 0, nil, d.Now())
	})
}

// installation reads the drift settings of each repository of one
// installation, marking them seen.
func (w *driftDiscoverWorker) installation(ctx context.Context, id int64, seen map[string]bool) error {
	d := w.d
	gh, err := d.Clients.NewInstallationClient(id)
	if err != nil {
		return fmt.Errorf("installation %d client: %w", id, err)
	}
	var errs []error
	if err := pull.EachPage(func(opts *github.ListOptions) (*github.Response, error) {
		list, resp, err := gh.Apps.ListRepos(ctx, opts)
		if err != nil {
			return resp, err
		}
		var live []*github.Repository
		for _, r := range list.Repositories {
			if !r.GetArchived() {
				seen[r.GetFullName()] = true
				live = append(live, r)
			}
		}
		errs = append(errs, worker.Each(ctx, live, func(ctx context.Context, r *github.Repository) error {
			return w.repo(ctx, jobs.NewRepo(id, r.GetOwner().GetLogin(), r.GetName()), r.GetDefaultBranch())
		}))
		return resp, nil
	}); err != nil {
		return fmt.Errorf("list the repositories of installation %d: %w", id, err)
	}
	return errors.Join(errs...)
}

// repo stores one repository's drift settings, as driftOnPush does; a
// file that does not parse keeps them as they were.
func (w *driftDiscoverWorker) repo(ctx context.Context, r jobs.Repo, branch string) error {
	d := w.d
	repo, err := d.Repo(r)
	if err != nil {
		return err
	}
	cfg, err := worker.ReadRepoConfig(ctx, repo, branch)
	var bad config.RepoErrors
	if errors.As(err, &bad) {
		worker.Warn(ctx, fmt.Errorf("%s@%s: %w", r.FullName, branch, err), "drift schedules kept: the default branch's config does not parse")
		return nil
	}
	if err != nil {
		return err
	}
	return d.Store.SetDriftLayers(ctx, r.FullName, r.InstallationID, driftWanted(cfg), d.Now())
}
