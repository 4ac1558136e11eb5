// Package jobs defines the durable jobs that handlers enqueue and workers
// run: their arguments, timeouts and retry policies. River's defaults (a
// one-minute timeout, 25 attempts) fit none of them.
package jobs

import (
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
)

// Runs is the queue of the jobs that run a tool (Terraform, kustomize,
// Helm): long, and as many at once per replica as STRATA_WORKERS says.
// Every other job (a command, an event, a scan, a cleanup) is on River's
// default queue, worked by as many workers again: a /cancel or a push is
// never queued behind runs, and a run a command enqueues is fetched at
// once instead of after the command's own queue's fetch cooldown
// (queue.Options.RunQueue).
const Runs = "runs"

// untilDone: a job unique by its arguments in these states is one job while
// it is still to run or running, and may be inserted again once it has
// ended, for jobs whose arguments say what to look at, not which event
// asked (River's default also counts the jobs that ended).
var untilDone = []rivertype.JobState{
	rivertype.JobStateAvailable, rivertype.JobStatePending, rivertype.JobStateRunning,
	rivertype.JobStateRetryable, rivertype.JobStateScheduled,
}

// Repo says which repository a job works on, and with which installation.
type Repo struct {
	InstallationID int64  `json:"installation_id"`
	Owner          string `json:"owner"`
	Name           string `json:"name"`
	// FullName is "owner/name", recorded on the job's runs.
	FullName string `json:"repo"`
}

// NewRepo fills a Repo.
func NewRepo(installationID int64, owner, name string) Repo {
	return Repo{InstallationID: installationID, Owner: owner, Name: name, FullName: owner + "/" + name}
}

// Command is a Strata command from a PR comment or a check-run button. The
// worker authorizes it, reacts and expands it into the work it names.
type Command struct {
	Repo
	PR        int    `json:"pr"`
	CommentID int64  `json:"comment_id,omitempty"` // 0 for a button
	User      string `json:"user"`
	// Body is the command line as typed, or as a button stands for it.
	Body string `json:"body"`
}

func (Command) Kind() string { return "command" }

// InsertOpts: a command only reads, reacts and enqueues, so it may retry.
func (Command) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 3} }

// CommandTimeout bounds a command job: it talks to GitHub, runs no tools.
const CommandTimeout = 2 * time.Minute
