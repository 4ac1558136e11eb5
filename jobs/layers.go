package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// LayerSpec is what a run needs of a layer's config, fixed when the run is
// enqueued so that a retry runs the same thing.
type LayerSpec struct {
	Name      string   `json:"name"`
	Dir       string   `json:"dir"`
	Workspace string   `json:"workspace"`
	VarFiles  []string `json:"var_files,omitempty"`
	DependsOn []string `json:"depends_on,omitempty"`
	// Engine is terraform (or empty) or tofu: which kind of binary runs it.
	Engine string `json:"engine,omitempty"`
	// LockOnApply: the layer's lock is taken by /apply, not by plans
	// (lock: on_apply).
	LockOnApply bool `json:"lock_on_apply,omitempty"`
	// State is the layer's `state:` mode (managed, own, or empty: Strata
	// keeps the state of a layer that declares no backend).
	State string `json:"state,omitempty"`
	// CodeOwners: the layer requires code owners' approval to apply; its
	// plan comment says whose is still missing.
	CodeOwners bool `json:"codeowners,omitempty"`
	// OnMerge: merging the PR applies the layer (auto_apply: on_merge);
	// its plan comment says so.
	OnMerge bool `json:"on_merge,omitempty"`
}

// LayerPlan plans one layer of a PR at a head commit. Plans only read (the
// state lock aside), so a plan whose process died is retried.
type LayerPlan struct {
	Repo
	PR      int       `json:"pr"`
	Target  string    `json:"target"` // the layer's name
	HeadSHA string    `json:"head_sha"`
	Layer   LayerSpec `json:"layer"`
	User    string    `json:"user"`
	// CheckRunID is the `strata/plan: LAYER` check created queued.
	CheckRunID int64 `json:"check_run_id"`
	// Batch gathers the layers of one command into one comment.
	Batch    string `json:"batch"`
	Position int    `json:"position"`
}

func (LayerPlan) Kind() string { return "layer_plan" }

// InsertOpts: the arguments name the plan's check, so the same plan
// inserted twice (its event job retried) is one job. A plan recovered after a
// crash is inserted with options of its own, so it is not refused as a
// duplicate of the attempt it replaces.
func (LayerPlan) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Runs, MaxAttempts: 3, UniqueOpts: river.UniqueOpts{ByArgs: true}}
}

// LayerApply applies the saved plans of a PR's layers at one head, one after
// the other in dependency order. It is never run twice: an apply whose
// process died is reported as interrupted.
type LayerApply struct {
	Repo
	PR      int         `json:"pr"`
	Target  string      `json:"target"` // the layers, comma-separated, for the run record
	HeadSHA string      `json:"head_sha"`
	User    string      `json:"user"`
	Steps   []ApplyStep `json:"steps"`
}

// ApplyStep is one layer of an apply, with its `strata/apply: LAYER` check.
type ApplyStep struct {
	Layer      LayerSpec `json:"layer"`
	CheckRunID int64     `json:"check_run_id"`
}

func (LayerApply) Kind() string { return "layer_apply" }

func (LayerApply) InsertOpts() river.InsertOpts { return river.InsertOpts{Queue: Runs, MaxAttempts: 1} }

// LockRepair makes the `strata/lock: LAYER` checks agree with the store's
// locks; it runs at start-up.
type LockRepair struct{}

func (LockRepair) Kind() string { return "layer_lock_repair" }

func (LockRepair) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 3} }

// Timeouts of layer jobs: a Terraform plan or apply of a large layer takes
// long; waiting for another run of the same layer counts too.
const (
	LayerPlanTimeout  = 1 * time.Hour
	LayerApplyTimeout = 2 * time.Hour
	LockRepairTimeout = 10 * time.Minute
)
