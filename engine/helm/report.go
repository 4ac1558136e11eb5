package helm

import (
	"strings"
	"time"
)

// Phase is how a test hook ended.
type Phase string

const (
	PhaseSucceeded Phase = "Succeeded"
	PhaseFailed    Phase = "Failed"
	PhaseUnknown   Phase = "Unknown"
	PhaseRunning   Phase = "Running"
	// PhaseSkipped: the hook was selected but did not run in this test,
	// because an earlier hook failed.
	PhaseSkipped Phase = "Skipped"
)

// Cause says why a hook, an upgrade or the whole run failed.
type Cause string

const (
	CauseNone       Cause = ""
	CauseFailed     Cause = "failed"
	CauseTimedOut   Cause = "timed out"
	CauseNotCreated Cause = "could not be created"
)

// PodLog holds the logs of one pod of a hook, read before any delete policy
// removed the pod.
type PodLog struct {
	Pod  string `json:"pod"`
	Text string `json:"text"`
	Err  string `json:"err,omitempty"` // the logs could not be read
}

// HookResult is one hook of the run: a test hook, or a hook of the install
// or upgrade (Event says which, e.g. pre-upgrade).
type HookResult struct {
	Name      string        `json:"name"`
	Kind      string        `json:"kind"`
	Event     string        `json:"event,omitempty"` // empty for test hooks
	Phase     Phase         `json:"phase"`
	Started   time.Time     `json:"started"`
	Completed time.Time     `json:"completed"`
	Duration  time.Duration `json:"duration"`
	Cause     Cause         `json:"cause,omitempty"`
	Err       string        `json:"err,omitempty"`
	Logs      []PodLog      `json:"logs,omitempty"`
}

// Unlocked records a release revision found stuck in a pending state and
// marked failed before the upgrade.
type Unlocked struct {
	Revision int    `json:"revision"`
	From     string `json:"from"` // pending-install, pending-upgrade or pending-rollback
	Err      string `json:"err,omitempty"`
}

// RemediationResult is what was done after a failed upgrade or test.
type RemediationResult struct {
	Strategy Remediation `json:"strategy"`
	// Action taken: "rollback" or "uninstall"; uninstall also when rollback
	// was asked for but no earlier healthy revision exists.
	Action     string `json:"action"`
	ToRevision int    `json:"to_revision,omitempty"`
	Reason     string `json:"reason,omitempty"`
	Err        string `json:"err,omitempty"`
}

// Report is the outcome of a Test run; it is plain data so the caller can
// store it and render it later.
type Report struct {
	Release      string   `json:"release"`
	Namespace    string   `json:"namespace"`
	ChartName    string   `json:"chart_name"`
	ChartVersion string   `json:"chart_version"`
	AppVersion   string   `json:"app_version,omitempty"`
	ValuesDigest string   `json:"values_digest"`
	Filters      []string `json:"filters,omitempty"`

	Unlocked *Unlocked `json:"unlocked,omitempty"`
	// Action is "install" or "upgrade".
	Action       string `json:"action"`
	UpgradeErr   string `json:"upgrade_err,omitempty"`
	UpgradeCause Cause  `json:"upgrade_cause,omitempty"`
	TestErr      string `json:"test_err,omitempty"`
	// UpgradeHooks are the hooks the install or upgrade ran (pre- and
	// post-install, pre- and post-upgrade), with their logs.
	UpgradeHooks []HookResult `json:"upgrade_hooks,omitempty"`

	Hooks       []HookResult       `json:"hooks"`
	Remediation *RemediationResult `json:"remediation,omitempty"`

	// Revision and Status are what storage holds last, from the observed
	// writes, whatever the SDK calls returned.
	Revision int     `json:"revision"`
	Status   string  `json:"status"`
	Writes   []Write `json:"writes"`

	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
}

// Passed reports whether the release was installed or upgraded and every
// selected test hook succeeded.
func (r *Report) Passed() bool {
	if r.UpgradeErr != "" || r.TestErr != "" {
		return false
	}
	for _, h := range r.Hooks {
		if h.Phase != PhaseSucceeded {
			return false
		}
	}
	return true
}

// Cause is why the run failed: the upgrade's cause, else the first failed
// hook's cause, else CauseFailed for any other error; CauseNone on success.
func (r *Report) Cause() Cause {
	if r.UpgradeErr != "" {
		return r.UpgradeCause
	}
	for _, h := range r.Hooks {
		if h.Cause != CauseNone {
			return h.Cause
		}
	}
	if !r.Passed() {
		return CauseFailed
	}
	return CauseNone
}

// Mask replaces every occurrence of the secrets in logs and error messages
// with "***". Call it before Markdown or before storing the report.
func (r *Report) Mask(secrets []string) {
	r.Redact(func(s string) string {
		for _, secret := range secrets {
			if secret != "" {
				s = strings.ReplaceAll(s, secret, "***")
			}
		}
		return s
	})
}

// Redact applies fn to every log text and error message of the report.
func (r *Report) Redact(fn func(string) string) {
	r.UpgradeErr = fn(r.UpgradeErr)
	r.TestErr = fn(r.TestErr)
	if r.Unlocked != nil {
		r.Unlocked.Err = fn(r.Unlocked.Err)
	}
	if r.Remediation != nil {
		r.Remediation.Err = fn(r.Remediation.Err)
	}
	for _, hooks := range [][]HookResult{r.UpgradeHooks, r.Hooks} {
		redactHooks(hooks, fn)
	}
	for i := range r.Writes {
		r.Writes[i].Description = fn(r.Writes[i].Description)
		r.Writes[i].Err = fn(r.Writes[i].Err)
	}
}

func redactHooks(hooks []HookResult, fn func(string) string) {
	for i := range hooks {
		h := &hooks[i]
		h.Err = fn(h.Err)
		for j := range h.Logs {
			h.Logs[j].Text = fn(h.Logs[j].Text)
			h.Logs[j].Err = fn(h.Logs[j].Err)
		}
	}
}
