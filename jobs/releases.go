package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// ReleaseSpec is what a run needs of a release's config, fixed when the run
// is enqueued: the cluster, namespace and Helm release name come from the
// default branch (see config.Effective), the rest from the PR head.
type ReleaseSpec struct {
	Name        string        `json:"name"`
	Chart       string        `json:"chart"`
	ReleaseName string        `json:"release_name"` // with the PR number in place of {pr}
	Namespace   string        `json:"namespace"`
	Values      []string      `json:"values,omitempty"`
	Cluster     string        `json:"cluster"` // the server config's cluster name, resolved
	Timeout     time.Duration `json:"timeout"`
	Filters     []string      `json:"filters,omitempty"`
	Remediation string        `json:"remediation"`
}

// ReleaseTest upgrades (or installs) one release from the PR head's chart
// and runs its Helm tests. It is never run twice: an upgrade has side
// effects, so a run whose process died is reported as interrupted.
type ReleaseTest struct {
	Repo
	PR      int         `json:"pr"`
	Target  string      `json:"target"` // the release's name in .strata.yaml
	HeadSHA string      `json:"head_sha"`
	User    string      `json:"user"`
	Release ReleaseSpec `json:"release"`
	// CheckRunID is the `strata/helm-test: RELEASE` check created queued.
	CheckRunID int64 `json:"check_run_id"`
}

func (ReleaseTest) Kind() string { return "release_test" }

func (ReleaseTest) InsertOpts() river.InsertOpts {
	return river.InsertOpts{Queue: Runs, MaxAttempts: 1}
}

// Timeout bounds a whole run: waiting for another run of the release, the
// upgrade's wait, the tests and a rollback each get the release's test
// timeout, plus a margin for fetching the tree and talking to GitHub.
func (a ReleaseTest) Timeout() time.Duration {
	t := a.Release.Timeout
	if t <= 0 {
		t = 5 * time.Minute
	}
	return 4*t + ReleaseMargin
}

// ReleaseCleanup uninstalls a PR's release when the PR is closed or merged.
// Uninstalling an absent release does nothing, so it may retry.
type ReleaseCleanup struct {
	Repo
	PR      int         `json:"pr"`
	Target  string      `json:"target"`
	HeadSHA string      `json:"head_sha"`
	Merged  bool        `json:"merged"`
	Release ReleaseSpec `json:"release"`
}

func (ReleaseCleanup) Kind() string { return "release_cleanup" }

func (ReleaseCleanup) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 3} }

// Timeout: waiting for a running test of the release, then the uninstall.
func (a ReleaseCleanup) Timeout() time.Duration {
	t := a.Release.Timeout
	if t <= 0 {
		t = 5 * time.Minute
	}
	return 5*t + ReleaseMargin
}

// ReleaseMargin is the time a release job gets beyond its Helm timeouts.
const ReleaseMargin = 5 * time.Minute
