package helm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/engine/markdown"
)

// addUpgradeHooks adds a pre-upgrade hook deleted when it succeeds and a
// post-upgrade hook to the chart at dir.
func addUpgradeHooks(t *testing.T, dir string) {
	t.Helper()
	hook := func(name, event, policy string) string {
		ann := "    helm.sh/hook: " + event + "\n"
		if policy != "" {
			ann += "    helm.sh/hook-delete-policy: " + policy + "\n"
		}
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  annotations:\n" + ann +
			"spec:\n  restartPolicy: Never\n  containers:\n    - name: hook\n      image: busybox\n"
	}
	for name, text := range map[string]string{
		"templates/migrate.yaml": hook("api-migrate", "pre-upgrade", "hook-succeeded"),
		"templates/notify.yaml":  hook("api-notify", "post-upgrade", ""),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// An upgrade runs a pre- and a post-upgrade hook -> both are in the report
// with phase, duration and logs, the pre-upgrade one's read before its
// hook-succeeded policy deleted the pod; the install before ran none.
func TestUpgradeHooksHaveLogs(t *testing.T) {
	c := newCluster()
	c.SetLogs("api-migrate", "migrate: 3 tables altered\n")
	c.SetLogs("api-notify", "notify: sent\n")
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)
	addUpgradeHooks(t, dir)

	if first := mustTest(t, cfg, c, input(dir, values)); len(first.UpgradeHooks) != 0 {
		t.Errorf("install ran upgrade hooks: %+v", first.UpgradeHooks)
	}
	rep := mustTest(t, cfg, c, input(dir, values))
	if !rep.Passed() || len(rep.UpgradeHooks) != 2 {
		t.Fatalf("passed=%v upgrade hooks=%+v", rep.Passed(), rep.UpgradeHooks)
	}
	pre, post := rep.UpgradeHooks[0], rep.UpgradeHooks[1]
	if pre.Name != "api-migrate" || pre.Event != "pre-upgrade" || pre.Phase != PhaseSucceeded || pre.Started.IsZero() ||
		len(pre.Logs) != 1 || pre.Logs[0].Text != "migrate: 3 tables altered\n" {
		t.Errorf("pre-upgrade hook = %+v", pre)
	}
	if post.Name != "api-notify" || post.Event != "post-upgrade" || len(post.Logs) != 1 || post.Logs[0].Text != "notify: sent\n" {
		t.Errorf("post-upgrade hook = %+v", post)
	}
	if c.PodExists(ns, "api-migrate") {
		t.Error("pod api-migrate survived its hook-succeeded policy")
	}
	if len(rep.Hooks) != 3 {
		t.Errorf("test hooks = %+v", rep.Hooks)
	}
	md := rep.Markdown(markdown.MaxBytes)
	for _, want := range []string{"| upgrade hook | event | phase | duration |", "| `api-migrate` | pre-upgrade | ✅ Succeeded |",
		"<details><summary>Logs of <code>api-migrate</code> (pre-upgrade, Succeeded)", "migrate: 3 tables altered"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

// A failing pre-upgrade hook -> the upgrade failed, the hook is Failed with
// its logs, and the post-upgrade hook, which did not run, is not listed.
func TestFailingUpgradeHookHasLogs(t *testing.T) {
	c := newCluster()
	c.SetLogs("api-migrate", "migrate: lock timeout\n")
	cfg := newConfig(t, c)
	dir, values := twoHooks(t)
	addUpgradeHooks(t, dir)
	mustTest(t, cfg, c, input(dir, values))
	c.FailWatch("api-migrate", errors.New("pod api-migrate failed"))

	rep := mustTest(t, cfg, c, input(dir, values))
	if rep.Passed() || !strings.Contains(rep.UpgradeErr, "pre-upgrade hooks failed") {
		t.Fatalf("passed=%v upgrade error %q", rep.Passed(), rep.UpgradeErr)
	}
	if len(rep.UpgradeHooks) != 1 {
		t.Fatalf("upgrade hooks = %+v", rep.UpgradeHooks)
	}
	if h := rep.UpgradeHooks[0]; h.Phase != PhaseFailed || h.Cause != CauseFailed || len(h.Logs) != 1 || h.Logs[0].Text != "migrate: lock timeout\n" {
		t.Errorf("pre-upgrade hook = %+v", h)
	}
}
