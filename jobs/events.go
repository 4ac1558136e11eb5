package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// PullRequest is a PR opened, reopened, pushed to (synchronize) or closed.
// Its worker gives it to each feature: autoplan and lock release for layers,
// previews and takeovers for syncs, cleanup for releases.
type PullRequest struct {
	Repo
	PR      int    `json:"pr"`
	Action  string `json:"action"` // opened, reopened, synchronize, closed
	HeadSHA string `json:"head_sha"`
	// BeforeSHA is the previous head on synchronize.
	BeforeSHA string `json:"before_sha,omitempty"`
	HeadRef   string `json:"head_ref"`
	BaseRef   string `json:"base_ref"`
	BaseSHA   string `json:"base_sha"`
	// Fork is a PR whose head lives in another repository: nothing runs on
	// it without a maintainer's command.
	Fork   bool `json:"fork"`
	Merged bool `json:"merged"`
	// MergeSHA and MergedAt are the merge commit and time of a merged PR
	// (auto_apply: on_merge applies in merge order).
	MergeSHA      string    `json:"merge_sha,omitempty"`
	MergedAt      time.Time `json:"merged_at,omitempty"`
	Author        string    `json:"author"`
	Sender        string    `json:"sender"`
	DefaultBranch string    `json:"default_branch"`
}

func (PullRequest) Kind() string { return "pull_request" }

// InsertOpts: fanning out only reads and enqueues.
func (PullRequest) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 5} }

// Push is a push to the default branch.
type Push struct {
	Repo
	Ref           string   `json:"ref"`
	Before        string   `json:"before"`
	After         string   `json:"after"`
	DefaultBranch string   `json:"default_branch"`
	Changed       []string `json:"changed,omitempty"` // files named by the push's commits, when complete
}

func (Push) Kind() string { return "push" }

func (Push) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 5} }

// EventTimeout bounds the fan-out of an event job.
const EventTimeout = 2 * time.Minute
