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

// InsertOpts: it only reads, plans and writes a check, so it may retry; a
// redelivered event is one job.
func (MergeGroup) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Runs, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// MergeGroupTimeout: planning the group's head for each layer that applies
// on merge.
const MergeGroupTimeout = time.Hour
