package helm

import (
	"context"
	"errors"
	"fmt"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// remediate undoes a failed upgrade or test as in.Remediation asks.
//
// Rollback goes to the newest earlier revision that was healthy (deployed or
// superseded). When there is none — the failed revision was the first
// install, or every earlier one failed — it uninstalls instead: a release
// that never worked has nothing to return to, and leaving it half-installed
// would make the next run an upgrade of a broken release.
func remediate(run *action.Configuration, in Input, actionTaken string) *RemediationResult {
	res := &RemediationResult{Strategy: in.Remediation}
	if in.Remediation == RemediateRollback {
		target, err := rollbackTarget(run, in.ReleaseName)
		if err != nil {
			res.Action, res.Err = "rollback", err.Error()
			return res
		}
		if target > 0 {
			res.Action, res.ToRevision = "rollback", target
			rb := action.NewRollback(run)
			rb.Version = target
			rb.Wait = true
			rb.Timeout = in.Timeout
			rb.MaxHistory = maxHistory
			if err := rb.Run(in.ReleaseName); err != nil {
				res.Err = err.Error()
			}
			return res
		}
		res.Reason = "no earlier healthy revision to roll back to"
		if actionTaken == "install" {
			res.Reason = "the failed revision was the first install"
		}
	}
	res.Action = "uninstall"
	if err := uninstall(run, in.ReleaseName, in.Timeout); err != nil {
		res.Err = err.Error()
	}
	return res
}

// rollbackTarget is the newest revision below the last one that was
// deployed or superseded, or 0.
func rollbackTarget(run *action.Configuration, name string) (int, error) {
	hist, err := run.Releases.History(name)
	if err != nil {
		return 0, fmt.Errorf("reading history of %s: %w", name, err)
	}
	last := 0
	for _, r := range hist {
		last = max(last, r.Version)
	}
	target := 0
	for _, r := range hist {
		if r.Version >= last || r.Version <= target {
			continue
		}
		if s := r.Info.Status; s == release.StatusDeployed || s == release.StatusSuperseded {
			target = r.Version
		}
	}
	return target, nil
}

// Uninstall removes the release and its history, for cleanup when a PR is
// closed. An absent release is not an error. The context's deadline, if
// any, bounds the wait for deletion; DefaultTimeout otherwise.
func Uninstall(ctx context.Context, cfg *action.Configuration, releaseName string) error {
	timeout := DefaultTimeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = time.Until(dl)
	}
	run := *cfg
	if run.Log == nil {
		run.Log = func(string, ...any) {}
	}
	return uninstall(&run, releaseName, timeout)
}

func uninstall(run *action.Configuration, name string, timeout time.Duration) error {
	u := action.NewUninstall(run)
	u.IgnoreNotFound = true
	u.Wait = true
	u.Timeout = timeout
	_, err := u.Run(name)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return fmt.Errorf("uninstalling release %s: %w", name, err)
	}
	return nil
}
