package helm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"k8s.io/apimachinery/pkg/util/wait"

	"strata.dev/strata/engine/helm/helmtest"
	"strata.dev/strata/engine/markdown"
)

func twoHooks(t *testing.T) (string, string) {
	return writeChart(t,
		testHook{name: "api-test-a", weight: 0, policies: "hook-succeeded"},
		testHook{name: "api-test-b", weight: 1, policies: "hook-succeeded,hook-failed"},
		testHook{name: "api-test-c", weight: 2},
	)
}

func TestInstallThenUpgradeRunsEveryHookWithLogs(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	kube := cfg.KubeClient
	dir, values := twoHooks(t)

	first := mustTest(t, cfg, c, input(dir, values))
	if !first.Passed() || first.Action != "install" || first.Revision != 1 || first.Status != "deployed" {
		t.Fatalf("install: passed=%v action=%s revision=%d status=%s upgrade=%q test=%q", first.Passed(), first.Action, first.Revision, first.Status, first.UpgradeErr, first.TestErr)
	}

	rep := mustTest(t, cfg, c, input(dir, values))
	if !rep.Passed() || rep.Action != "upgrade" || rep.Revision != 2 || rep.Status != "deployed" {
		t.Fatalf("upgrade: passed=%v action=%s revision=%d status=%s", rep.Passed(), rep.Action, rep.Revision, rep.Status)
	}
	if rep.ChartName != "api" || rep.ChartVersion != "1.2.3" || rep.AppVersion != "4.5.6" {
		t.Errorf("chart = %s %s %s", rep.ChartName, rep.ChartVersion, rep.AppVersion)
	}
	if !strings.HasPrefix(rep.ValuesDigest, "sha256:") || rep.ValuesDigest != first.ValuesDigest {
		t.Errorf("values digest %q, first %q", rep.ValuesDigest, first.ValuesDigest)
	}
	if len(rep.Hooks) != 3 {
		t.Fatalf("hooks = %+v", rep.Hooks)
	}
	a := hookByName(t, rep, "api-test-a")
	if a.Phase != PhaseSucceeded || a.Started.IsZero() || len(a.Logs) != 1 || a.Logs[0].Text != "a: connected\n" {
		t.Errorf("hook a = %+v", a)
	}
	// hook-succeeded removed the pod, after its logs were read.
	if c.PodExists(ns, "api-test-a") {
		t.Errorf("pod api-test-a survived its hook-succeeded policy")
	}
	// Without a policy Helm deletes before the next creation only.
	if !c.PodExists(ns, "api-test-c") {
		t.Errorf("pod api-test-c should remain until the next run")
	}
	if cfg.KubeClient != kube {
		t.Errorf("Test replaced the caller's kube client")
	}
}

func TestFailingHookKeepsLogsDeletedByPolicy(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)
	c.FailWatch("api-test-b", errors.New("pod api-test-b failed"))

	rep := mustTest(t, cfg, c, input(dir, values))
	if rep.Passed() || rep.Cause() != CauseFailed {
		t.Fatalf("passed=%v cause=%q", rep.Passed(), rep.Cause())
	}
	b := hookByName(t, rep, "api-test-b")
	if b.Phase != PhaseFailed || b.Cause != CauseFailed || !strings.Contains(b.Err, "pod api-test-b failed") {
		t.Errorf("hook b = %+v", b)
	}
	if len(b.Logs) != 1 || !strings.Contains(b.Logs[0].Text, "500 internal error") {
		t.Errorf("hook b logs = %+v", b.Logs)
	}
	if c.PodExists(ns, "api-test-b") || c.PodExists(ns, "api-test-a") {
		t.Errorf("delete policies did not run: deleted %v", c.Deleted())
	}
	if a := hookByName(t, rep, "api-test-a"); a.Phase != PhaseSucceeded || a.Logs[0].Text != "a: connected\n" {
		t.Errorf("hook a = %+v", a)
	}
	if h := hookByName(t, rep, "api-test-c"); h.Phase != PhaseSkipped {
		t.Errorf("hook c = %+v, want skipped", h)
	}
	if rep.Revision != 1 || rep.Status != "deployed" {
		t.Errorf("revision %d %s", rep.Revision, rep.Status)
	}
	md := rep.Markdown(markdown.MaxBytes)
	for _, want := range []string{"❌ Helm tests failed: failed", "| `api-test-b` | ❌ Failed |", "500 internal error", "<details>"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestHookTimeoutAndCreationError(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(c *helmtest.FakeCluster)
		cause Cause
	}{
		{"timeout", func(c *helmtest.FakeCluster) { c.FailWatch("api-test-b", wait.ErrWaitTimeout) }, CauseTimedOut},
		{"deadline", func(c *helmtest.FakeCluster) {
			c.FailWatch("api-test-b", fmt.Errorf("watching pod: %w", context.DeadlineExceeded))
		}, CauseTimedOut},
		{"create", func(c *helmtest.FakeCluster) {
			c.FailCreate("api-test-b", errors.New(`pods "api-test-b" is forbidden: exceeded quota`))
		}, CauseNotCreated},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := newCluster()
			cfg := newConfig(t, c)
			dir, values := twoHooks(t)
			tc.setup(c)
			rep := mustTest(t, cfg, c, input(dir, values))
			b := hookByName(t, rep, "api-test-b")
			if b.Phase != PhaseFailed || b.Cause != tc.cause || rep.Cause() != tc.cause {
				t.Errorf("hook b = %+v, report cause %q", b, rep.Cause())
			}
			if !strings.Contains(rep.Markdown(markdown.MaxBytes), string(tc.cause)) {
				t.Errorf("markdown lacks the cause")
			}
		})
	}
}

func TestStuckPendingUpgradeIsUnlockedThenUpgraded(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)
	mustTest(t, cfg, c, input(dir, values))

	// A Strata replica died mid-upgrade: revision 2 stays pending-upgrade.
	last, err := cfg.Releases.Last("api-pr-7")
	if err != nil {
		t.Fatal(err)
	}
	stuck := *last
	stuck.Info = &release.Info{Status: release.StatusPendingUpgrade}
	stuck.Version = 2
	if err := cfg.Releases.Create(&stuck); err != nil {
		t.Fatal(err)
	}

	rep := mustTest(t, cfg, c, input(dir, values))
	if rep.Unlocked == nil || rep.Unlocked.Revision != 2 || rep.Unlocked.From != "pending-upgrade" {
		t.Fatalf("unlocked = %+v", rep.Unlocked)
	}
	if !rep.Passed() || rep.Revision != 3 || rep.Status != "deployed" {
		t.Fatalf("passed=%v revision=%d status=%s upgrade=%q", rep.Passed(), rep.Revision, rep.Status, rep.UpgradeErr)
	}
	if w := rep.Writes[0]; w.Op != "update" || w.Revision != 2 || w.Status != "failed" || !strings.Contains(w.Description, "unlocked") {
		t.Errorf("first write = %+v", w)
	}
	rev2, _ := cfg.Releases.Get("api-pr-7", 2)
	if rev2.Info.Status == release.StatusPendingUpgrade {
		t.Errorf("revision 2 still pending in storage")
	}
	if !strings.Contains(rep.Markdown(markdown.MaxBytes), "stuck in `pending-upgrade`") {
		t.Errorf("markdown does not mention the unlock")
	}
}

func TestRollbackRemediationAfterFailedTest(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)
	mustTest(t, cfg, c, input(dir, values))

	c.FailWatch("api-test-a", errors.New("pod api-test-a failed"))
	in := input(dir, values)
	in.Remediation = RemediateRollback
	rep := mustTest(t, cfg, c, in)
	m := rep.Remediation
	if m == nil || m.Action != "rollback" || m.ToRevision != 1 || m.Err != "" {
		t.Fatalf("remediation = %+v", m)
	}
	// Revision 2 failed its tests; the rollback wrote revision 3 from 1.
	if rep.Revision != 3 || rep.Status != "deployed" {
		t.Errorf("revision %d %s, writes %+v", rep.Revision, rep.Status, rep.Writes)
	}
	if !strings.Contains(rep.Markdown(markdown.MaxBytes), "rolled back to revision 1") {
		t.Errorf("markdown lacks the rollback")
	}
}

func TestRollbackWithoutEarlierRevisionUninstalls(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)
	c.FailWatch("api-test-a", errors.New("pod api-test-a failed"))
	in := input(dir, values)
	in.Remediation = RemediateRollback
	rep := mustTest(t, cfg, c, in)
	if m := rep.Remediation; m == nil || m.Action != "uninstall" || m.Reason == "" || m.Err != "" {
		t.Fatalf("remediation = %+v", m)
	}
	if _, err := cfg.Releases.Last("api-pr-7"); err == nil {
		t.Errorf("release still in storage")
	}
}

func TestUninstallRemediationAfterFailedUpgrade(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)
	mustTest(t, cfg, c, input(dir, values))

	c.FailWait(wait.ErrWaitTimeout)
	in := input(dir, values)
	in.Remediation = RemediateUninstall
	rep := mustTest(t, cfg, c, in)
	if rep.UpgradeErr == "" || rep.UpgradeCause != CauseTimedOut || len(rep.Hooks) != 0 {
		t.Fatalf("upgrade err %q cause %q hooks %d", rep.UpgradeErr, rep.UpgradeCause, len(rep.Hooks))
	}
	if m := rep.Remediation; m == nil || m.Action != "uninstall" || m.Err != "" {
		t.Fatalf("remediation = %+v", m)
	}
	if _, err := cfg.Releases.Last("api-pr-7"); err == nil {
		t.Errorf("release still in storage")
	}
	if rep.Status != "deleted" {
		t.Errorf("status = %s", rep.Status)
	}
}

func TestFiltersSelectOneHook(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)
	c.FailWatch("api-test-a", errors.New("would fail if run"))
	in := input(dir, values)
	in.Filters = []string{"api-test-b"}
	rep := mustTest(t, cfg, c, in)
	if !rep.Passed() || len(rep.Hooks) != 1 || rep.Hooks[0].Name != "api-test-b" {
		t.Fatalf("passed=%v hooks=%+v test=%q", rep.Passed(), rep.Hooks, rep.TestErr)
	}
}

func TestObservationRecordsWritesOfFailedUpgrade(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)
	mustTest(t, cfg, c, input(dir, values))

	c.FailUpdate(errors.New("admission webhook denied the request"))
	rep := mustTest(t, cfg, c, input(dir, values))
	if rep.UpgradeErr == "" || rep.UpgradeCause != CauseFailed {
		t.Fatalf("upgrade err %q cause %q", rep.UpgradeErr, rep.UpgradeCause)
	}
	var sawPending, sawFailed bool
	for _, w := range rep.Writes {
		if w.Revision == 2 && w.Op == "create" && w.Status == "pending-upgrade" {
			sawPending = true
		}
		if w.Revision == 2 && w.Op == "update" && w.Status == "failed" {
			sawFailed = true
		}
	}
	if !sawPending || !sawFailed {
		t.Errorf("writes = %+v", rep.Writes)
	}
	if rep.Revision != 2 || rep.Status != "failed" {
		t.Errorf("revision %d %s", rep.Revision, rep.Status)
	}
}

func TestUninstallIgnoresAbsentRelease(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	if err := Uninstall(context.Background(), cfg, "api-pr-7"); err != nil {
		t.Fatalf("absent: %v", err)
	}
	dir, values := twoHooks(t)
	mustTest(t, cfg, c, input(dir, values))
	if err := Uninstall(context.Background(), cfg, "api-pr-7"); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Releases.Last("api-pr-7"); err == nil {
		t.Errorf("release still in storage")
	}
}

func TestBadInput(t *testing.T) {
	c := newCluster()
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)

	in := input(dir, values)
	in.Remediation = "retry"
	if _, err := Test(context.Background(), cfg, nil, in); err == nil {
		t.Errorf("unknown remediation accepted")
	}
	in = input("charts/api", values)
	if _, err := Test(context.Background(), cfg, nil, in); err == nil {
		t.Errorf("relative chart dir accepted")
	}
}
