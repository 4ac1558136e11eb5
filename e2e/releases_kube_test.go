package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/helm"
	"strata.dev/strata/engine/helm/helmtest"
	"strata.dev/strata/releases"
)

// TestReleasesRealCluster runs /helm-test through the real server and the
// fake GitHub against a real cluster, only when STRATA_E2E_KUBECONFIG is set
// (STRATA_E2E_CONTEXT and STRATA_E2E_NAMESPACE, default "default", are
// optional). It needs to pull busybox:1.36. A passing hook deleted on
// success and a failing hook deleted on failure both show their logs, and
// closing the PR uninstalls the release.
func TestReleasesRealCluster(t *testing.T) {
	live := helmtest.RealCluster(t)
	namespace := live.Namespace
	cluster := config.Cluster{Name: "ci", Kubeconfig: live.Kubeconfig, Context: live.Context}
	prefix := "strata-e2e-" + time.Now().Format("150405")
	e := apptest.Start(t, apptest.Options{Configure: func(c *config.Server) { c.Clusters = []config.Cluster{cluster} }})
	e.Repo.Commit("main", map[string]string{
		".strata.yaml": fmt.Sprintf("version: 1\nreleases:\n  - name: e2e\n    chart: charts/e2e\n    release_name: %s-{pr}\n"+
			"    namespace: %s\n    cluster: ci\n    test: {timeout: 3m}\n    cleanup_on_close: true\n", prefix, namespace),
		"charts/e2e/Chart.yaml":          "apiVersion: v2\nname: e2e\nversion: 0.1.0\n",
		"charts/e2e/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\n",
		"charts/e2e/templates/pass.yaml": helmtest.HookPod("{{ .Release.Name }}-pass", `"echo passing-hook-output"`, "hook-succeeded", "0"),
		"charts/e2e/templates/fail.yaml": helmtest.HookPod("{{ .Release.Name }}-fail", `"echo failing-hook-output; exit 1"`, "hook-failed", "1"),
	}, "Add release e2e")
	e.Repo.SetPermission("alice", "write")
	e.Repo.Commit("try", map[string]string{"charts/e2e/values.yaml": "x: 1\n"}, "Values")
	pr := e.Repo.OpenPR("try", "main", "alice")
	name := fmt.Sprintf("%s-%d", prefix, pr.Number)
	t.Cleanup(func() {
		cfg, _, err := releases.KubeClusters{}.Connect(context.Background(), cluster, namespace)
		if err == nil {
			_ = helm.Uninstall(context.Background(), cfg, name)
		}
	})

	e.Deliver(e.Repo.IssueCommentEvent(pr.Number, "alice", "/helm-test e2e"))
	var cr struct{ Title, Summary, Conclusion string }
	e.WaitFor(6*time.Minute, func() bool {
		c, ok := e.Repo.CheckRun(pr.HeadSHA(), "strata/helm-test: e2e")
		cr.Title, cr.Summary, cr.Conclusion = c.Title, c.Summary, c.Conclusion
		return ok && c.Status == "completed"
	})
	t.Log(cr.Summary)
	if cr.Conclusion != "failure" || cr.Title != "Failed: "+name+"-fail failed" {
		t.Errorf("check = %s %q", cr.Conclusion, cr.Title)
	}
	wantText(t, "check summary", cr.Summary, "passing-hook-output", "failing-hook-output", "| `"+name+"-pass` | ✅ Succeeded |")

	e.Repo.ClosePR(pr.Number, false)
	e.Deliver(e.Repo.PullRequestEvent("closed", pr.Number))
	e.WaitFor(6*time.Minute, func() bool {
		for _, c := range e.Repo.Comments(pr.Number) {
			if strings.Contains(c.Body, "Uninstalled Helm release `"+name+"`") {
				return true
			}
		}
		return false
	})
	noViolations(t, e.GitHub)
}
