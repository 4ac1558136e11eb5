// Package worker is the runtime the capabilities (layers, syncs, releases)
// run in: what they share (Deps), the command job that dispatches a PR
// command to the capability that owns it, the fan-out of PR and push events
// to every capability, and the report of runs a crash interrupted. It knows
// no capability: app hands it each one as a Feature value.
package worker

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/go-github/v60/github"
	"github.com/palantir/go-githubapp/githubapp"
	"github.com/riverqueue/river"
	"github.com/rs/zerolog"

	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/pull"
	"strata.dev/strata/queue"
	"strata.dev/strata/redact"
	"strata.dev/strata/report"
	"strata.dev/strata/runlog"
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
	// Clock is the time; tests move it instead of waiting. time.Now when nil.
	Clock func() time.Time
	// StateURL is the base URL of the managed state's backend on its
	// loopback listener (http://127.0.0.1:PORT); empty when the server
	// keeps no state (state.addr: off).
	StateURL string
}

// Now is the time by the Deps' clock.
func (d *Deps) Now() time.Time {
	if d.Clock != nil {
		return d.Clock()
	}
	return time.Now()
}

// Reporter returns a reporter for the job's repository with an installation
// client, redacting everything it sends.
func (d *Deps) Reporter(r jobs.Repo) (*report.Reporter, error) {
	rest, err := d.Client(r)
	if err != nil {
		return nil, err
	}
	v4, err := d.Clients.NewInstallationV4Client(r.InstallationID)
	if err != nil {
		return nil, fmt.Errorf("installation GraphQL client for %s: %w", r.FullName, err)
	}
	rep := report.New(rest, v4, r.Owner, r.Name, d.Redactor.String)
	rep.Reported = d.checkReported
	return rep, nil
}

// Client returns the installation's REST client, for the packages that talk
// to GitHub on the capabilities' behalf (pull, source, gitcommit).
func (d *Deps) Client(r jobs.Repo) (*github.Client, error) {
	c, err := d.Clients.NewInstallationClient(r.InstallationID)
	if err != nil {
		return nil, fmt.Errorf("installation client for %s: %w", r.FullName, err)
	}
	return c, nil
}

// Repo reads the job's repository; make one per job.
func (d *Deps) Repo(r jobs.Repo) (*pull.GitHubRepo, error) {
	gh, err := d.Client(r)
	if err != nil {
		return nil, err
	}
	return pull.NewRepo(gh, r.Owner, r.Name), nil
}

// PR reads a pull request of the job's repository; make one per job.
func (d *Deps) PR(ctx context.Context, r jobs.Repo, number int) (*pull.GitHubPR, error) {
	repo, err := d.Repo(r)
	if err != nil {
		return nil, err
	}
	return repo.PR(ctx, number)
}

// Fetch gives the repository's tree at sha, extracted; call release when
// done. Trees are shared between runs: copy before writing.
func (d *Deps) Fetch(ctx context.Context, r jobs.Repo, sha string) (string, func(), error) {
	gh, err := d.Client(r)
	if err != nil {
		return "", nil, err
	}
	return d.Fetcher.Fetch(ctx, source.GitHub{Client: gh}, r.Owner, r.Name, sha)
}

// WebURL is GitHub's web address, ending in "/".
func (d *Deps) WebURL() string {
	web := d.Config.GitHub.WebURL
	if web == "" {
		web = "https://github.com/"
	}
	if !strings.HasSuffix(web, "/") {
		web += "/"
	}
	return web
}

// PRURL links a pull request.
func (d *Deps) PRURL(fullName string, pr int) string {
	return fmt.Sprintf("%s%s/pull/%d", d.WebURL(), fullName, pr)
}

// CommitURL links a commit.
func (d *Deps) CommitURL(fullName, sha string) string {
	return d.WebURL() + fullName + "/commit/" + sha
}

// LogURL links a run's full log, served by the server at /runs/ID.
func (d *Deps) LogURL(runID int64) string {
	return runlog.URL(d.Config.PublicURL, d.Config.GitHub.WebhookSecret, runID)
}

// checkReported records on the current run the check that links to its
// log (the check the run reports to, which the web UI links) and the
// conclusion it completed with: the run's own status only says whether
// the job failed, not whether the plan did.
func (d *Deps) checkReported(ctx context.Context, id int64, c report.Check) {
	run := RunID(ctx)
	if run == 0 || c.DetailsURL == "" || c.DetailsURL != d.LogURL(run) {
		return
	}
	Warn(ctx, d.Store.SetRunCheck(context.WithoutCancel(ctx), run, id, c.Conclusion), "record the run's check")
}

// RunID is the id of the run record of the job ctx belongs to (set by the
// queue's tracker), 0 outside a job.
func RunID(ctx context.Context) int64 {
	if run := queue.RunFrom(ctx); run != nil {
		return run.ID
	}
	return 0
}

// AppendLog adds text (redacted) to the current run's log; outside a run
// it does nothing. A failure is logged, not returned: the log is a record,
// and the run's outcome does not depend on it. The web UI reads the log
// while it grows: a tool's output goes through LogWriter, line by line.
func (d *Deps) AppendLog(ctx context.Context, text string, redactWith func(string) string) {
	id := RunID(ctx)
	if id == 0 {
		return
	}
	if redactWith == nil {
		redactWith = d.Redactor.String
	}
	Warn(ctx, d.Store.AppendLog(context.WithoutCancel(ctx), id, redactWith(text)), "append to the run's log")
}

// Warn logs an error that a job goes on without (a check it could not
// update, a log line it could not store), with the job's kind, repository
// and PR from the queue; nil is not logged.
func Warn(ctx context.Context, err error, what string) {
	if err != nil {
		zerolog.Ctx(ctx).Warn().Err(err).Msg(what)
	}
}

// ClosedWhy says, in a comment's words, how a PR was closed.
func ClosedWhy(merged bool) string {
	if merged {
		return "the pull request was merged"
	}
	return "the pull request was closed"
}
