package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// LayerMergeApply is the post-merge apply of a merged PR's layers that
// apply on merge (auto_apply: on_merge), one after the other in dependency
// order: each is planned at the merge commit and applied only when that
// plan makes the changes of the PR's reviewed plan. Like an apply, it never
// runs twice: one whose process died is reported as interrupted.
type LayerMergeApply struct {
	Repo
	PR     int    `json:"pr"`
	Target string `json:"target"` // the layers, comma-separated, for the run record
	// HeadSHA is the merge commit: what is planned and applied.
	HeadSHA string `json:"head_sha"`
	// ReviewedSHA is the PR's head when it merged: its plans were reviewed.
	ReviewedSHA string      `json:"reviewed_sha"`
	User        string      `json:"user"`
	Steps       []MergeStep `json:"steps"`
}

// MergeStep is one layer of a post-merge apply: its row in the store
// (merge_applies, which orders the applies of a layer by merge) and its
// `strata/apply: LAYER` check on the merge commit.
type MergeStep struct {
	Layer      LayerSpec `json:"layer"`
	ID         int64     `json:"id"`
	CheckRunID int64     `json:"check_run_id"`
}

func (LayerMergeApply) Kind() string { return "layer_merge_apply" }

// InsertOpts: never retried (it applies); the same merge's job inserted
// twice (its event job retried) is one job.
func (LayerMergeApply) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Runs, MaxAttempts: 1, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// LayerMergeApplyTimeout: planning and applying each layer, after the
// merges before it.
const LayerMergeApplyTimeout = 3 * time.Hour
