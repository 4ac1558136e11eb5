package helm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage"
	"helm.sh/helm/v3/pkg/storage/driver"
)

// maxHistory is the number of revisions kept per release, as `helm upgrade`
// keeps by default: PR releases are re-run often.
const maxHistory = 10

// Test installs or upgrades the release from the chart, runs its test hooks
// with their logs, and remediates a failure as asked.
//
// A failed upgrade or test is an outcome, reported in the Report, not an
// error. The error is for runs that could not be carried out: invalid input,
// an unloadable chart or values, unreadable release storage. The Report is
// non-nil whenever the chart was loaded, error or not, and says what was
// written to storage up to that point.
//
// cfg is not modified: Test runs on a copy whose storage driver is wrapped
// by an observer and whose kube client is wrapped to capture hook logs.
func Test(ctx context.Context, cfg *action.Configuration, logs PodLogs, in Input) (*Report, error) {
	return test(ctx, cfg, logs, in, nil)
}

// test is Test, calling rendered (when set) once the install or upgrade
// created its revision, which it does only after rendering the chart.
func test(ctx context.Context, cfg *action.Configuration, logs PodLogs, in Input, rendered func()) (*Report, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	ch, vals, err := load(in)
	if err != nil {
		return nil, err
	}
	digest, err := valuesDigest(vals)
	if err != nil {
		return nil, err
	}

	rep := &Report{
		Release:      in.ReleaseName,
		Namespace:    in.Namespace,
		ChartName:    ch.Metadata.Name,
		ChartVersion: ch.Metadata.Version,
		AppVersion:   ch.Metadata.AppVersion,
		ValuesDigest: digest,
		Filters:      in.Filters,
		Started:      time.Now(),
	}
	obs := newObserver(cfg.Releases.Driver)
	obs.created = rendered
	kc := newCapturingClient(ctx, cfg.KubeClient, logs, in.Namespace)
	run := observed(cfg, obs, kc)
	defer finish(rep, run, obs)

	if err := unlock(run, in.ReleaseName, rep); err != nil {
		return rep, err
	}
	kc.start(stageUpgrade)
	err = installOrUpgrade(ctx, run, ch, vals, in, rep)
	kc.stop()
	if err != nil {
		return rep, err
	}
	rep.UpgradeHooks = upgradeHookResults(run, kc, in.ReleaseName, rep.Action)
	if rep.UpgradeErr == "" {
		runTests(run, kc, in, rep)
	}
	if !rep.Passed() && in.Remediation != RemediateNone {
		rep.Remediation = remediate(run, in, rep.Action)
	}
	return rep, nil
}

// observed copies cfg with the observer and the capturing client in place.
func observed(cfg *action.Configuration, obs *observer, kc *capturingClient) *action.Configuration {
	run := *cfg
	run.Releases = &storage.Storage{Driver: obs, MaxHistory: cfg.Releases.MaxHistory, Log: cfg.Releases.Log}
	if run.Releases.Log == nil {
		run.Releases.Log = func(string, ...any) {}
	}
	run.KubeClient = kc
	if run.Log == nil {
		run.Log = func(string, ...any) {}
	}
	if run.HookOutputFunc == nil {
		// Charts with helm.sh/hook-output-log-policy would otherwise print
		// to a nil writer; Strata has the logs already.
		run.HookOutputFunc = func(_, _, _ string) io.Writer { return io.Discard }
	}
	return &run
}

// finish fills what storage really holds: from the observed writes, or,
// when nothing was written, from storage itself.
func finish(rep *Report, run *action.Configuration, obs *observer) {
	rep.Writes = obs.Writes()
	rep.Revision, rep.Status = lastWritten(rep.Writes)
	if rep.Revision == 0 {
		if last, err := run.Releases.Last(rep.Release); err == nil {
			rep.Revision, rep.Status = last.Version, last.Info.Status.String()
		}
	}
	rep.Duration = time.Since(rep.Started)
}

// unlock marks a last revision stuck in a pending state failed, as
// helm-controller's unlock action does, so the upgrade is not refused with
// "another operation is in progress". A release is left pending when the
// process running its action died.
func unlock(run *action.Configuration, name string, rep *Report) error {
	last, err := run.Releases.Last(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading release %s: %w", name, err)
	}
	status := last.Info.Status
	if !status.IsPending() {
		return nil
	}
	rep.Unlocked = &Unlocked{Revision: last.Version, From: status.String()}
	last.SetStatus(release.StatusFailed, fmt.Sprintf("Release unlocked from stale '%s' state by Strata", status))
	if err := run.Releases.Update(last); err != nil {
		rep.Unlocked.Err = err.Error()
		return fmt.Errorf("unlocking release %s revision %d: %w", name, last.Version, err)
	}
	return nil
}

// installOrUpgrade installs when no release exists (or only an uninstalled
// one), upgrades otherwise; both wait for the resources up to the timeout.
// A failed install or upgrade goes into the report; the error is for
// unreadable storage.
func installOrUpgrade(ctx context.Context, run *action.Configuration, ch *chart.Chart, vals map[string]any, in Input, rep *Report) error {
	last, err := run.Releases.Last(in.ReleaseName)
	if err != nil && !errors.Is(err, driver.ErrReleaseNotFound) {
		return fmt.Errorf("reading release %s: %w", in.ReleaseName, err)
	}
	if err != nil || last.Info.Status == release.StatusUninstalled {
		rep.Action = "install"
		install := action.NewInstall(run)
		install.ReleaseName = in.ReleaseName
		install.Namespace = in.Namespace
		install.Wait = true
		install.Timeout = in.Timeout
		install.Replace = err == nil // reuse the name of an uninstalled release kept in history
		install.Labels = in.Labels
		_, err = install.RunWithContext(ctx, ch, vals)
	} else {
		rep.Action = "upgrade"
		upgrade := action.NewUpgrade(run)
		upgrade.Namespace = in.Namespace
		upgrade.Wait = true
		upgrade.Timeout = in.Timeout
		upgrade.MaxHistory = maxHistory
		upgrade.Labels = in.Labels
		_, err = upgrade.RunWithContext(ctx, in.ReleaseName, ch, vals)
	}
	if err != nil {
		rep.UpgradeErr = err.Error()
		rep.UpgradeCause = CauseFailed
		if isTimeout(err) {
			rep.UpgradeCause = CauseTimedOut
		}
	}
	return nil
}

// runTests runs the release's test hooks, capturing each hook's logs as it
// completes (see capturingClient).
func runTests(run *action.Configuration, kc *capturingClient, in Input, rep *Report) {
	rt := action.NewReleaseTesting(run)
	rt.Namespace = in.Namespace
	rt.Timeout = in.Timeout
	if len(in.Filters) > 0 {
		rt.Filters[action.IncludeNameFilter] = in.Filters
	}
	kc.start(stageTest)
	rel, err := rt.Run(in.ReleaseName)
	kc.stop()
	if err != nil {
		rep.TestErr = err.Error()
	}
	if rel != nil {
		rep.Hooks = hookResults(rel, kc, in.Filters)
	}
}

// hookResults describes every selected test hook of rel, in the order Helm
// ran them.
func hookResults(rel *release.Release, kc *capturingClient, filters []string) []HookResult {
	var out []HookResult
	for _, h := range sortedHooks(rel.Hooks, release.HookTest, filters) {
		r := HookResult{Name: h.Name, Kind: h.Kind}
		cp, ran := kc.captured(stageTest, h.Kind, h.Name)
		if !ran {
			// Helm stops at the first failed hook; the rest keep the
			// LastRun of an earlier test, which is not this run's.
			r.Phase = PhaseSkipped
			r.Err = "did not run: an earlier test hook failed"
			out = append(out, r)
			continue
		}
		out = append(out, ranHook(r, h, cp))
	}
	return out
}

// upgradeHookResults describes the hooks the install or upgrade (act)
// ran, from the revision it wrote: Helm records each hook's last run on it.
// Hooks that did not run (those after a failed one) are left out.
func upgradeHookResults(run *action.Configuration, kc *capturingClient, name, act string) []HookResult {
	rel, err := run.Releases.Last(name)
	if err != nil {
		return nil
	}
	events := []release.HookEvent{release.HookPreUpgrade, release.HookPostUpgrade}
	if act == "install" {
		events = []release.HookEvent{release.HookPreInstall, release.HookPostInstall}
	}
	var out []HookResult
	for _, event := range events {
		for _, h := range sortedHooks(rel.Hooks, event, nil) {
			if cp, ran := kc.captured(stageUpgrade, h.Kind, h.Name); ran {
				out = append(out, ranHook(HookResult{Name: h.Name, Kind: h.Kind, Event: string(event)}, h, cp))
			}
		}
	}
	return out
}

// ranHook fills r from the hook's last run and what the capture saw.
func ranHook(r HookResult, h *release.Hook, cp *capture) HookResult {
	run := h.LastRun
	r.Started, r.Completed = run.StartedAt.Time, run.CompletedAt.Time
	if !r.Completed.IsZero() && !r.Started.IsZero() {
		r.Duration = r.Completed.Sub(r.Started)
	}
	r.Phase = phaseOf(run.Phase)
	if cp != nil {
		r.Logs = cp.Logs
		switch {
		case cp.CreateErr != nil:
			r.Phase, r.Cause, r.Err = PhaseFailed, CauseNotCreated, cp.CreateErr.Error()
		case cp.WatchErr != nil && isTimeout(cp.WatchErr):
			r.Phase, r.Cause, r.Err = PhaseFailed, CauseTimedOut, cp.WatchErr.Error()
		case cp.WatchErr != nil:
			r.Phase, r.Cause, r.Err = PhaseFailed, CauseFailed, cp.WatchErr.Error()
		}
	}
	if r.Phase == PhaseFailed && r.Cause == CauseNone {
		r.Cause = CauseFailed
	}
	return r
}

func phaseOf(p release.HookPhase) Phase {
	switch p {
	case release.HookPhaseSucceeded:
		return PhaseSucceeded
	case release.HookPhaseFailed:
		return PhaseFailed
	case release.HookPhaseRunning:
		return PhaseRunning
	}
	return PhaseUnknown
}

// sortedHooks returns the hooks of event the filters select, ordered by
// weight then name as Helm runs them.
func sortedHooks(hooks []*release.Hook, event release.HookEvent, filters []string) []*release.Hook {
	var out []*release.Hook
	for _, h := range hooks {
		if !slices.Contains(h.Events, event) {
			continue
		}
		if len(filters) > 0 && !slices.Contains(filters, h.Name) {
			continue
		}
		out = append(out, h)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Weight != out[j].Weight {
			return out[i].Weight < out[j].Weight
		}
		return out[i].Name < out[j].Name
	})
	return out
}
