package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/helm/helmtest"
	"strata.dev/strata/githubtest"
)

// releasesEnv is a Strata server whose cluster "ci" is a fake Helm cluster,
// with acme/infra holding the chart of release api on its default branch.
type releasesEnv struct {
	scenario
	cluster *helmtest.FakeCluster
}

const (
	releasesWait = 60 * time.Second
	apiCheck     = "strata/helm-test: api"
	ciNamespace  = "ci"
)

// releaseOpts is the release api of .strata.yaml as a test wants it.
type releaseOpts struct {
	remediation string // none when empty
	cluster     string // ci when empty
	extra       string // more releases, as YAML list items
}

func (o releaseOpts) strataYAML() string {
	rem, cluster := o.remediation, o.cluster
	if rem == "" {
		rem = "none"
	}
	if cluster == "" {
		cluster = "ci"
	}
	return fmt.Sprintf(`version: 1
releases:
  - name: api
    chart: charts/api
    release_name: api-pr-{pr}
    namespace: ci
    values: [charts/api/ci-values.yaml]
    cluster: %s
    test: {timeout: 1m}
    remediation: %s
    cleanup_on_close: true
%s`, cluster, rem, o.extra)
}

// chartFiles is chart api 1.2.3 (app 4.5.6) with a vendored subchart and
// three test hooks: a deleted when it succeeds, b deleted whatever happens,
// c kept until the next run.
func chartFiles(dir string) map[string]string {
	hook := func(name, weight, policy string) string {
		annotations := "    helm.sh/hook: test\n    helm.sh/hook-weight: \"" + weight + "\"\n"
		if policy != "" {
			annotations += "    helm.sh/hook-delete-policy: " + policy + "\n"
		}
		return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  annotations:\n" + annotations +
			"spec:\n  restartPolicy: Never\n  containers:\n    - name: test\n      image: busybox:1.36\n"
	}
	return map[string]string{
		dir + "/Chart.yaml": "apiVersion: v2\nname: api\nversion: 1.2.3\nappVersion: \"4.5.6\"\n" +
			"dependencies:\n  - name: common\n    version: 0.1.0\n",
		dir + "/values.yaml":                    "greeting: hello\n",
		dir + "/ci-values.yaml":                 "greeting: hi from ci\n",
		dir + "/templates/configmap.yaml":       "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
		dir + "/templates/tests/a.yaml":         hook("api-test-a", "0", "hook-succeeded"),
		dir + "/templates/tests/b.yaml":         hook("api-test-b", "1", "hook-succeeded,hook-failed"),
		dir + "/templates/tests/c.yaml":         hook("api-test-c", "2", ""),
		dir + "/charts/common/Chart.yaml":       "apiVersion: v2\nname: common\nversion: 0.1.0\n",
		dir + "/charts/common/templates/x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-common\n",
	}
}

// startReleases starts Strata with cluster ci, and the default branch
// holding .strata.yaml and the chart.
func startReleases(t *testing.T, o releaseOpts, opts apptest.Options) *releasesEnv {
	t.Helper()
	fc, cluster := newFakeCluster(t)
	configure := opts.Configure
	opts.Configure = func(c *config.Server) {
		c.Clusters = append(c.Clusters, cluster)
		if configure != nil {
			configure(c)
		}
	}
	fc.SetLogs("api-test-a", "a: connected to api\n")
	fc.SetLogs("api-test-b", "b: GET /healthz\nb: 500 internal error\n")
	fc.SetLogs("api-test-c", "c: ok\n")
	opts.Clusters = fakes
	env := apptest.Start(t, opts)
	files := chartFiles("charts/api")
	files[".strata.yaml"] = o.strataYAML()
	env.Repo.Commit("main", files, "Add release api")
	return &releasesEnv{scenario: scenario{Env: env, t: t, wait: releasesWait}, cluster: fc}
}

// openPR opens a PR by author that changes the chart's values.
func (e *releasesEnv) openPR(branch, author string) *githubtest.PR {
	e.Repo.Commit(branch, map[string]string{"charts/api/values.yaml": "greeting: hello from " + branch + "\n"}, "Change "+branch)
	return e.Repo.OpenPR(branch, "main", author)
}

// completedN waits until n checks called name on sha are completed.
func (e *releasesEnv) completedN(sha, name string, n int) []githubtest.CheckRun {
	e.t.Helper()
	var done []githubtest.CheckRun
	e.WaitFor(releasesWait, func() bool {
		done = nil
		for _, cr := range e.Repo.CheckRuns(sha) {
			if cr.Name == name && cr.Status == "completed" {
				done = append(done, cr)
			}
		}
		return len(done) >= n
	})
	return done
}

// wantText fails the test for each text that s lacks.
func wantText(t *testing.T, what, s string, texts ...string) {
	t.Helper()
	for _, text := range texts {
		if !strings.Contains(s, text) {
			t.Errorf("%s lacks %q:\n%s", what, text, s)
		}
	}
}
