package e2e

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/release"
	"helm.sh/helm/v3/pkg/storage/driver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/kubetest"
	"strata.dev/strata/releases"
)

// releasesEnv is a Strata server whose cluster "ci" is the test binary's
// Kubernetes cluster (kubetest), with a namespace of the test's own and
// acme/infra holding the chart of release api on its default branch.
type releasesEnv struct {
	scenario
	kube      *kubetest.Cluster
	namespace string
	cluster   config.Cluster
}

const (
	releasesWait = 3 * time.Minute
	apiCheck     = "strata/helm-test: api"
)

// releaseOpts is the release api of .strata.yaml as a test wants it.
type releaseOpts struct {
	remediation string // none when empty
	cluster     string // ci when empty
	timeout     string // of the wait and the tests; 1m when empty
	extra       string // more releases, as YAML list items
}

func (o releaseOpts) strataYAML(namespace string) string {
	rem, cluster, timeout := o.remediation, o.cluster, o.timeout
	if rem == "" {
		rem = "none"
	}
	if cluster == "" {
		cluster = "ci"
	}
	if timeout == "" {
		timeout = "1m"
	}
	return fmt.Sprintf(`version: 1
releases:
  - name: api
    chart: charts/api
    release_name: api-pr-{pr}
    namespace: %s
    values: [charts/api/ci-values.yaml]
    cluster: %s
    test: {timeout: %s}
    remediation: %s
    cleanup_on_close: true
%s`, namespace, cluster, timeout, rem, o.extra)
}

// hookLogs is what each hook pod of chartFiles prints.
var hookLogs = map[string]string{
	"api-test-a":  "a: connected to api",
	"api-test-b":  "b: GET /healthz 200",
	"api-test-c":  "c: ok",
	"api-migrate": "migrate: 3 tables altered",
	"api-notify":  "notify: upgraded",
}

// chartFiles is chart api 1.2.3 (app 4.5.6) with a vendored subchart, a
// Deployment that --wait waits for, a pre-upgrade hook deleted when it
// succeeds, a post-upgrade hook, and three test hooks: a deleted when it
// succeeds, b deleted whatever happens, c kept until the next run. Every
// hook exits 0; testHook makes one that does not.
func chartFiles(dir string) map[string]string {
	return map[string]string{
		dir + "/Chart.yaml": "apiVersion: v2\nname: api\nversion: 1.2.3\nappVersion: \"4.5.6\"\n" +
			"dependencies:\n  - name: common\n    version: 0.1.0\n",
		dir + "/values.yaml":              "greeting: hello\n",
		dir + "/ci-values.yaml":           "greeting: hi from ci\n",
		dir + "/templates/configmap.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}\ndata:\n  greeting: {{ .Values.greeting | quote }}\n",
		dir + "/templates/deployment.yaml": `apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
spec:
  replicas: 1
  selector: {matchLabels: {app: {{ .Release.Name }}}}
  template:
    metadata:
      labels: {app: {{ .Release.Name }}}
      annotations: {greeting: {{ .Values.greeting | quote }}}
    spec:
      terminationGracePeriodSeconds: 0
      containers:
        - name: api
          image: busybox:1.36
          command: [sleep, "3600"]
`,
		dir + "/templates/migrate.yaml":         migrateHook("0"),
		dir + "/templates/notify.yaml":          kubetest.HookPod("api-notify", "post-upgrade", "before-hook-creation", "0", hookLogs["api-notify"], "0"),
		dir + "/templates/tests/a.yaml":         testHook("a", "0"),
		dir + "/templates/tests/b.yaml":         testHook("b", "0"),
		dir + "/templates/tests/c.yaml":         testHook("c", "0"),
		dir + "/charts/common/Chart.yaml":       "apiVersion: v2\nname: common\nversion: 0.1.0\n",
		dir + "/charts/common/templates/x.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-common\n",
	}
}

// migrateHook is the pre-upgrade hook api-migrate of chartFiles, exiting
// with exitCode. A pod left by an earlier, interrupted upgrade is replaced.
func migrateHook(exitCode string) string {
	return kubetest.HookPod("api-migrate", "pre-upgrade", "before-hook-creation,hook-succeeded", "0", hookLogs["api-migrate"], exitCode)
}

// testHook is test hook api-test-NAME of chartFiles, exiting with exitCode
// ("forever": never ends).
func testHook(name, exitCode string) string {
	return testHookPrinting(name, hookLogs["api-test-"+name], exitCode)
}

// testHookPrinting is testHook printing output (in a real cluster; the
// test cluster serves what SetLogs set).
func testHookPrinting(name, output, exitCode string) string {
	policy := map[string]string{"a": "hook-succeeded", "b": "hook-succeeded,hook-failed"}[name]
	weight := map[string]string{"a": "0", "b": "1", "c": "2"}[name]
	return kubetest.HookPod("api-test-"+name, "test", policy, weight, output, exitCode)
}

// startReleases starts Strata with cluster ci, and the default branch
// holding .strata.yaml and the chart.
func startReleases(t *testing.T, o releaseOpts, opts apptest.Options) *releasesEnv {
	t.Helper()
	kube, namespace := kubetest.Namespace(t)
	for pod, text := range hookLogs {
		kube.SetLogs(t, namespace, pod, text+"\n")
	}
	cluster := config.Cluster{Name: "ci", Kubeconfig: kube.Kubeconfig, Context: kube.Context}
	configure := opts.Configure
	opts.Configure = func(c *config.Server) {
		c.Clusters = append(c.Clusters, cluster)
		if configure != nil {
			configure(c)
		}
	}
	env := apptest.Start(t, opts)
	files := chartFiles("charts/api")
	files[".strata.yaml"] = o.strataYAML(namespace)
	env.Repo.Commit("main", files, "Add release api")
	return &releasesEnv{scenario: scenario{Env: env, t: t, wait: releasesWait}, kube: kube, namespace: namespace, cluster: cluster}
}

// openPR opens a PR by author that changes the chart's values, and more
// files if given.
func (e *releasesEnv) openPR(branch, author string, files ...map[string]string) *githubtest.PR {
	change := map[string]string{"charts/api/values.yaml": "greeting: hello from " + branch + "\n"}
	for _, f := range files {
		for k, v := range f {
			change[k] = v
		}
	}
	e.Repo.Commit(branch, change, "Change "+branch)
	return e.Repo.OpenPR(branch, "main", author)
}

// history lists the revisions of release name as Helm's storage in the
// cluster holds them, oldest first.
func (e *releasesEnv) history(name string) []*release.Release {
	e.t.Helper()
	cfg, _, err := releases.KubeClusters{}.Connect(context.Background(), e.cluster, e.namespace)
	if err != nil {
		e.t.Fatal(err)
	}
	h, err := cfg.Releases.History(name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return nil
	}
	if err != nil {
		e.t.Fatalf("history of %s: %v", name, err)
	}
	slices.SortFunc(h, func(a, b *release.Release) int { return a.Version - b.Version })
	return h
}

// podExists tells whether the pod is in the test's namespace now.
func (e *releasesEnv) podExists(name string) bool {
	_, err := e.kube.Client.CoreV1().Pods(e.namespace).Get(context.Background(), name, metav1.GetOptions{})
	return err == nil
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

func statuses(hist []*release.Release) []string {
	var out []string
	for _, r := range hist {
		out = append(out, r.Info.Status.String())
	}
	return out
}
