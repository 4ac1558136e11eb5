package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
)

// badDeployment has a value of the wrong type and a field its schema does
// not know: kustomize builds it as it is.
const badDeployment = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: worker
spec:
  replicas: "two"
  selector: {matchLabels: {app: worker}}
  template:
    metadata: {labels: {app: worker}}
    spec:
      containers:
      - name: worker
        image: busybox:1.36
        imagePullPolicyy: Always
`

// withBadDeployment is the app repository whose dev overlay adds
// badDeployment.
func withBadDeployment() map[string]string {
	files := kustomizeRepo()
	files["deploy/overlays/dev/worker.yaml"] = badDeployment
	files["deploy/overlays/dev/kustomization.yaml"] = strings.Replace(files["deploy/overlays/dev/kustomization.yaml"],
		"- namespace.yaml\n", "- namespace.yaml\n- worker.yaml\n", 1)
	return files
}

// invalidListed checks that a check's summary names the invalid object by
// file, kind and name with the schema's messages, and the custom resource
// as not validated.
func invalidListed(t *testing.T, summary string) {
	t.Helper()
	for _, want := range []string{
		"1 object of 6 invalid against Kubernetes v1.37.2's schemas",
		"- `deployment_dev_worker.yaml`: `Deployment` `worker`",
		"`/spec/replicas: got string, want integer`",
		"`/spec/template/spec/containers/0: additional properties imagePullPolicyy not allowed`",
		"Not validated (kinds these schemas do not know, such as custom resources): `monitoring.coreos.com/v1 ServiceMonitor` (1)",
	} {
		if !strings.Contains(summary, want) {
			t.Errorf("summary lacks %q:\n%s", want, summary)
		}
	}
}

// By default (warn) a push whose output has an invalid Deployment is
// hydrated, and its check is neutral and lists what is wrong.
func TestHydrateValidateWarn(t *testing.T) {
	files := withBadDeployment()
	files[".strata.yaml"] = syncsConfig
	e := startSyncs(t, apptest.Options{}, files)
	sha := e.push(map[string]string{"docs/README.md": "x\n"}, "Push")
	cr := e.completed(sha, devHydrate)
	if cr.Conclusion != "neutral" || !strings.HasSuffix(cr.Title, "; 1 invalid object") {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	invalidListed(t, cr.Summary)
	if !strings.Contains(cr.Summary, "(`hydrate.validate: warn`: reported, not blocking)") {
		t.Errorf("summary does not say warn:\n%s", cr.Summary)
	}
	if _, ok := e.hydrated("dev")["deployment_dev_worker.yaml"]; !ok {
		t.Errorf("warn did not hydrate: %v", keys(e.hydrated("dev")))
	}

	// A PR that fixes it: its preview validates the head and is clean.
	fixed := strings.Replace(strings.Replace(badDeployment, `"two"`, "2", 1), "imagePullPolicyy", "imagePullPolicy", 1)
	e.Repo.Commit("fix", map[string]string{"deploy/overlays/dev/worker.yaml": fixed}, "Fix the worker")
	pr := e.Repo.OpenPR("fix", "main", "alice")
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	prev := e.completed(pr.HeadSHA(), devHydrate)
	if prev.Conclusion != "success" || !strings.Contains(prev.Summary, "**Validation:** 5 objects valid against Kubernetes v1.37.2's schemas.") {
		t.Errorf("preview = %s %q\n%s", prev.Conclusion, prev.Title, prev.Summary)
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// validate: block on the default branch: the invalid output fails the
// check and nothing is committed; the push that fixes it hydrates. A PR's
// preview under block fails as well, with the same list.
func TestHydrateValidateBlock(t *testing.T) {
	files := withBadDeployment()
	files[".strata.yaml"] = strings.Replace(syncsConfig, "    takeover:", "    validate: block\n    takeover:", 1)
	e := startSyncs(t, apptest.Options{}, files)
	sha := e.push(map[string]string{"docs/README.md": "x\n"}, "Push")
	cr := e.completed(sha, devHydrate)
	if cr.Conclusion != "failure" || cr.Title != "1 invalid object: not hydrated" {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	invalidListed(t, cr.Summary)
	if !strings.Contains(cr.Summary, "`hydrate.validate: block`, so nothing was committed") {
		t.Errorf("summary:\n%s", cr.Summary)
	}
	if b := e.Repo.Branch("hydrated"); b != "" {
		t.Fatalf("block committed %s", b)
	}

	// A PR whose head is still invalid: the preview fails.
	e.Repo.Commit("scale", map[string]string{"deploy/overlays/dev/replicas.yaml": "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: api\nspec:\n  replicas: 4\n"}, "Scale")
	pr := e.Repo.OpenPR("scale", "main", "alice")
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	prev := e.completed(pr.HeadSHA(), devHydrate)
	if prev.Conclusion != "failure" || !strings.Contains(prev.Title, "1 invalid object") {
		t.Errorf("preview = %s %q\n%s", prev.Conclusion, prev.Title, prev.Summary)
	}
	invalidListed(t, prev.Summary) // with file, kind and name, as on a push

	// The fix is hydrated, though it changes nothing else.
	fixed := strings.Replace(strings.Replace(badDeployment, `"two"`, "2", 1), "imagePullPolicyy", "imagePullPolicy", 1)
	good := e.push(map[string]string{"deploy/overlays/dev/worker.yaml": fixed}, "Fix")
	cr = e.completed(good, devHydrate)
	if cr.Conclusion != "success" || !strings.Contains(cr.Summary, "**Validation:** 5 objects valid") {
		t.Fatalf("fixed = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if _, ok := e.hydrated("dev")["deployment_dev_worker.yaml"]; !ok {
		t.Errorf("the fix was not hydrated: %v", keys(e.hydrated("dev")))
	}
	noViolations(t, e.GitHub)
	noFailedRuns(t, e.Server.Store())
}

// hydrate.validate: off in the server config validates nothing: the
// invalid Deployment is hydrated and the check says nothing of it.
func TestHydrateValidateOff(t *testing.T) {
	files := withBadDeployment()
	files[".strata.yaml"] = syncsConfig
	e := startSyncs(t, apptest.Options{Configure: func(c *config.Server) { c.Hydrate.Validate = config.ValidateOff }}, files)
	sha := e.push(map[string]string{"docs/README.md": "x\n"}, "Push")
	cr := e.completed(sha, devHydrate)
	if cr.Conclusion != "success" || strings.Contains(cr.Summary, "Validation") {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	noViolations(t, e.GitHub)
}
