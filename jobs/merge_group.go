package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// MergeGroup is a group of GitHub's merge queue whose checks are requested:
// its head gets `strata/applied` (every layer the group's pull requests
// change applied from them, or, applying on merge, planned at the group's
// head as it was reviewed).
type MergeGroup struct {
	Repo
	// HeadSHA is the group's head commit; HeadRef its full ref,
	// refs/heads/gh-readonly-queue/BASE/pr-N-SHA, naming the last pull
	// request of the group.
	HeadSHA string `json:"head_sha"`
	HeadRef string `json:"head_ref"`
	// BaseSHA is the commit of the base branch the group was made on.
	BaseSHA       string `json:"base_sha"`
	BaseRef       string `json:"base_ref"`
	DefaultBranch string `json:"default_branch"`
}

func (MergeGroup) Kind() string { return "merge_group" }

// InsertOpts: it only reads, plans and writes a check, so it may retry. A
// request for a group whose job is still to run or running is that job; one
// for a group whose job has finished is a job again: GitHub makes a group of
// the same pull requests on the same base within a second into the same
// merge commit, and the facts (an apply since) may have changed. A
// redelivered event is stopped before, by its delivery's record.
func (MergeGroup) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Runs, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: untilDone}}
}

// MergeGroupTimeout: planning the group's head for each layer that applies
// on merge.
const MergeGroupTimeout = time.Hour
