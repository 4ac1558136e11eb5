package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// SyncSpec is what a hydration needs of a sync's config, fixed when the job is
// enqueued so that a retry hydrates the same thing.
type SyncSpec struct {
	Name       string      `json:"name"`
	Source     string      `json:"source"`
	DestRepo   string      `json:"dest_repo"` // owner/name, always set
	DestBranch string      `json:"dest_branch"`
	DestPath   string      `json:"dest_path"`
	Images     []SyncImage `json:"images,omitempty"`
	// HydrateTo is the staging branch hydrations go to, promoted into
	// DestBranch by a pull request; "" when they go to DestBranch.
	HydrateTo string `json:"hydrate_to,omitempty"`
	// CommitMessage is the dest.commit_message template, "" for Strata's.
	CommitMessage string `json:"commit_message,omitempty"`
	// File is the Sync file the sync was discovered in; "" for the syncs
	// of .strata.yaml.
	File string `json:"file,omitempty"`
	// Validate is the sync's validate (off, warn, block); "" is the
	// server's hydrate.validate, read when the job runs.
	Validate string `json:"validate,omitempty"`
}

// SyncImage is an image rule of a sync.
type SyncImage struct {
	Name string `json:"name"`
	Tag  string `json:"tag,omitempty"`
	Pin  string `json:"pin,omitempty"`
}

// Why a sync is hydrated from the default branch.
const (
	HydratePush    = "push"    // its inputs changed on the default branch
	HydrateRelease = "release" // a takeover ended
	HydrateRepin   = "repin"   // a pinned image's tag moved
)

// SyncHydrate hydrates a sync from a commit of the default branch into its
// destination. A hydration writes what its inputs determine, compares and
// swaps the branch, and refuses to replace a newer source commit, so one
// whose process died is retried.
type SyncHydrate struct {
	Repo
	// PR is the PR whose takeover ended (Reason release), told the outcome.
	PR      int      `json:"pr"`
	Target  string   `json:"target"`   // the sync's name
	HeadSHA string   `json:"head_sha"` // the source commit
	Sync    SyncSpec `json:"sync"`
	Reason  string   `json:"reason"`
	// Note says why in the commit message and the check: the image that
	// moved, how the takeover ended.
	Note string `json:"note,omitempty"`
}

func (SyncHydrate) Kind() string { return "sync_hydrate" }

func (SyncHydrate) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Runs, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: time.Minute}}
}

// SyncPreview hydrates a sync at a PR's base and head and shows the diff on
// the head's `strata/hydrate: SYNC` check. It commits nothing.
type SyncPreview struct {
	Repo
	PR         int      `json:"pr"`
	Target     string   `json:"target"`
	HeadSHA    string   `json:"head_sha"`
	BaseSHA    string   `json:"base_sha"`
	Sync       SyncSpec `json:"sync"`
	CheckRunID int64    `json:"check_run_id"`
}

func (SyncPreview) Kind() string { return "sync_preview" }

func (SyncPreview) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Runs, MaxAttempts: 3}
}

// SyncTakeover hydrates a PR's head into the destination of a sync the PR has
// taken over. It writes another branch's content over the destination, so
// it is never run twice: one whose process died is reported.
type SyncTakeover struct {
	Repo
	PR      int       `json:"pr"`
	Target  string    `json:"target"`
	HeadSHA string    `json:"head_sha"`
	Sync    SyncSpec  `json:"sync"`
	User    string    `json:"user"`
	Until   time.Time `json:"until"`
}

func (SyncTakeover) Kind() string { return "sync_takeover" }

func (SyncTakeover) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Runs, MaxAttempts: 1}
}

// TakeoverExpiry ends a takeover when its time is up. It is inserted
// scheduled at Until, so it survives restarts; a takeover extended since
// is left alone. Its retries finish the ending an attempt left.
type TakeoverExpiry struct {
	Repo
	PR            int       `json:"pr"`
	Target        string    `json:"target"`
	Until         time.Time `json:"until"`
	DefaultBranch string    `json:"default_branch"`
}

func (TakeoverExpiry) Kind() string { return "sync_takeover_expiry" }

func (TakeoverExpiry) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 10} }

// SyncRepin re-resolves the pinned images of every sync and rehydrates the
// syncs whose tags moved. It also finishes the takeover endings that no job
// retries any more (see store.EndTakeover).
type SyncRepin struct{}

func (SyncRepin) Kind() string { return "sync_repin" }

func (SyncRepin) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 1} }

// Timeouts of sync jobs: a hydration builds a large kustomization and writes
// thousands of files through the Git Data API.
const (
	SyncHydrateTimeout = 20 * time.Minute
	SyncRepinTimeout   = 10 * time.Minute
	TakeoverEndTimeout = 5 * time.Minute
)
