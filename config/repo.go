package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// RepoFile is the name of the repo config at the repository root.
const RepoFile = ".strata.yaml"

// Repo is a parsed .strata.yaml with defaults applied.
type Repo struct {
	File     string // file name used in errors, e.g. ".strata.yaml"
	Version  int
	Layers   []Layer
	Syncs    []Sync
	Releases []Release
	// Lock is the lock mode of the layers that set none (default on_plan).
	Lock LockMode
	// Drift is the repository's drift detection, for layers that set none.
	Drift *Drift
	// Engine is the engine of the layers that name none; empty is terraform.
	Engine string
	// Policies are the policy sets (repo_policies.go): policy, read from
	// the default branch only.
	Policies []PolicySet
	// Discovery finds more syncs in files (repo_discovery.go); nil when
	// off. Only the default branch's counts.
	Discovery *SyncDiscovery
	// AutoApply is the auto_apply of the layers that set none (default off).
	AutoApply AutoApply
	// State is the state mode of the layers that set none (repo_state.go).
	State StateMode
}

// Layer is a Terraform root module run in one workspace.
type Layer struct {
	// Name defaults to Dir, plus "@WORKSPACE" when Workspace is not "default".
	Name      string
	Dir       string   // repo-relative, cleaned
	Workspace string   // default "default"
	VarFiles  []string // relative to Dir
	Autoplan  Autoplan
	// ApplyRequirements is policy: it is always taken from the default branch
	// for a layer that exists there (see Effective).
	ApplyRequirements []ApplyRequirement
	DependsOn         []string // names of other layers
	Line              int      // line of the layer in the file
	// Engine is EngineTerraform or EngineTofu: which kind of the server's
	// binaries runs the layer; empty (the default when the file names
	// none either) is terraform.
	Engine string
	// Lock says when a PR takes the layer's lock: policy, like
	// ApplyRequirements (see Effective). Default: the file's, or on_plan.
	Lock LockMode
	// Drift is the layer's drift detection (or the repository's), nil
	// when off; read from the default branch only (see docs/drift.md).
	Drift *Drift
	// AutoApply says whether merging applies the layer: policy, from the
	// default branch (see Effective and repo_auto_apply.go).
	AutoApply AutoApply
	// State says who keeps the layer's state: policy, from the default
	// branch (see Effective and repo_state.go).
	State StateMode
	// Policies names the policy sets that judge the layer's plans; nil is
	// every set. Policy, from the default branch (repo_policies.go).
	Policies []string
}

// Autoplan says when a push plans a layer.
type Autoplan struct {
	Enabled bool // default true
	// WhenModified are globs relative to the layer's Dir: path.Match syntax plus
	// "**" for any number of directories, and ".." to reach outside Dir, e.g.
	// "../modules/**/*.tf". Default: DefaultWhenModified.
	WhenModified []string
}

// DefaultWhenModified are the autoplan globs of a layer that sets none: the
// Terraform files directly in its dir. Unlike Atlantis ("**/*.tf*"),
// subdirectories are not included, so a layer nested in another's dir does not
// plan both. A layer with these globs also follows the local modules it calls
// (at any depth, wherever they are in the repository): a change to one plans
// it. A layer that sets its own globs follows only them.
var DefaultWhenModified = []string{"*.tf", "*.tfvars"}

// ApplyRequirement is a condition a PR must meet before /apply.
type ApplyRequirement string

const (
	Approved   ApplyRequirement = "approved"
	Mergeable  ApplyRequirement = "mergeable"
	Undiverged ApplyRequirement = "undiverged"
	// CodeOwners: each file of the layer the PR changes is approved, at
	// the head, by one of its code owners in the default branch's
	// CODEOWNERS (docs/governance.md).
	CodeOwners ApplyRequirement = "codeowners"
)

// ApplyRequirements are the known requirements, in the order messages list them.
var ApplyRequirements = []ApplyRequirement{Approved, Mergeable, Undiverged, CodeOwners}

// Valid reports whether r is a known requirement.
func (r ApplyRequirement) Valid() bool { return slices.Contains(ApplyRequirements, r) }

// Sync hydrates a kustomization into a destination branch.
type Sync struct {
	Name     string
	Source   string // repo-relative kustomization dir
	Dest     Dest
	Images   []Image
	Takeover Takeover
	Line     int
	// Proposed marks a sync only a PR defines (see Effective): it may be
	// previewed, but nothing is hydrated into its destination.
	Proposed bool
	// File is the Sync file discovery found it in (repo_discovery.go);
	// "" for the syncs of .strata.yaml.
	File string
	// Validate is how hydrated output is checked against Kubernetes'
	// schemas: ValidateOff, ValidateWarn or ValidateBlock; "" is the
	// server's hydrate.validate. Policy: from the default branch.
	Validate string
}

// Dest is where a sync writes its output.
type Dest struct {
	Repo   string // "owner/name"; empty means this repository
	Branch string // required
	Path   string // cleaned; "." is the branch root
	// HydrateTo is a staging branch: hydrations are committed there and
	// promoted into Branch by one pull request (repo_dest.go); "" commits
	// into Branch.
	HydrateTo string
	// CommitMessage is a text/template over CommitMessageData for the
	// hydration commits; "" keeps Strata's own message.
	CommitMessage string
}

// SourceCommitTag makes an image's tag the commit being hydrated.
const SourceCommitTag = "source-commit"

// Image rewrites an image reference in the hydrated output.
type Image struct {
	Name string // e.g. ghcr.io/acme/api
	Tag  string // SourceCommitTag (the default) or a literal tag
	Pin  Pin
}

// Pin says whether the tag is replaced by the image digest.
type Pin string

const (
	PinNone   Pin = ""
	PinDigest Pin = "digest"
)

// Takeover bounds how long a PR may hold a sync's destination.
type Takeover struct {
	Default time.Duration // default 2h
	Max     time.Duration // default 12h
}

// Release is a Helm chart installed per PR and tested.
type Release struct {
	Name string
	// Chart is the repo-relative chart dir.
	Chart string
	// ReleaseName is the Helm release name; "{pr}" is replaced by the PR
	// number. Default "NAME-pr-{pr}".
	ReleaseName string
	Namespace   string // default "default"
	Values      []string
	// Cluster names a cluster of the server config; empty means the server's
	// default cluster.
	Cluster     string
	Test        ReleaseTest
	Remediation Remediation
	// CleanupOnClose uninstalls the release when the PR closes. Default true.
	CleanupOnClose bool
	Line           int
}

// ReleaseTest configures the Helm tests of a release.
type ReleaseTest struct {
	Timeout time.Duration // default 5m
	Filters []string      // test names; empty means all
}

// Remediation is what happens to a release whose upgrade or test failed.
type Remediation string

const (
	RemediateNone      Remediation = "none"
	RemediateRollback  Remediation = "rollback"
	RemediateUninstall Remediation = "uninstall"
)

// ReleaseNameFor is the Helm release name of r for PR number pr.
func (r *Release) ReleaseNameFor(pr int) string {
	return strings.ReplaceAll(r.ReleaseName, "{pr}", fmt.Sprint(pr))
}

// Defaults.
const (
	DefaultWorkspace       = "default"
	DefaultTakeover        = 2 * time.Hour
	DefaultTakeoverMax     = 12 * time.Hour
	DefaultTestTimeout     = 5 * time.Minute
	DefaultNamespace       = "default"
	DefaultReleaseTemplate = "%s-pr-{pr}"
)

// RepoError is one problem in a repo config, with its place.
type RepoError struct {
	File string
	Line int // 0 when the problem has no line (e.g. a missing key)
	Msg  string
}

func (e *RepoError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
	return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
}

// RepoErrors are all the problems found in one repo config, in line order.
// ParseRepo and Validate return them as a RepoErrors value, so callers can
// report each one on its line.
type RepoErrors []*RepoError

func (es RepoErrors) Error() string {
	msgs := make([]string, len(es))
	for i, e := range es {
		msgs[i] = e.Error()
	}
	return strings.Join(msgs, "\n")
}

// repoErrs collects problems of one file.
type repoErrs struct {
	file string
	list RepoErrors
}

func (e *repoErrs) add(line int, format string, args ...any) {
	e.list = append(e.list, &RepoError{File: e.file, Line: line, Msg: fmt.Sprintf(format, args...)})
}

// err is nil when nothing was added, so a caller never sees a typed nil.
func (e *repoErrs) err() error {
	if len(e.list) == 0 {
		return nil
	}
	sort.SliceStable(e.list, func(i, j int) bool { return e.list[i].Line < e.list[j].Line })
	return e.list
}
