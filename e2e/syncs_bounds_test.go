package e2e

import (
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/engine/hydrate/hydratetest"
)

// A push whose overlay includes a diamond of bases 24 levels deep (2^25
// kustomizations to build, from 50 small files) is refused before
// kustomize starts: the check fails naming the limit and the first
// kustomization over it, nothing is committed, and the next push builds.
// Before, the build ran until the timeout, then on in the background.
func TestSyncsExponentialKustomizationIsRefused(t *testing.T) {
	e := startSyncs(t, apptest.Options{}, nil)
	good := e.push(map[string]string{"docs/README.md": "x\n"}, "First")
	e.completed(good, devHydrate)
	before := e.Repo.Branch("hydrated")

	files := hydratetest.Diamond(24)
	files["deploy/overlays/dev/kustomization.yaml"] = "resources: [../../diamond]\n"
	bomb := e.push(files, "Include the bases many times over")
	cr := e.completed(bomb, devHydrate)
	if cr.Conclusion != "failure" || cr.Title != "kustomize build failed" ||
		!strings.Contains(cr.Summary, "deploy/l11a/kustomization.yaml: over a build limit: it builds 3071 kustomizations") {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if after := e.Repo.Branch("hydrated"); after != before {
		t.Errorf("a refused build moved the destination: %s -> %s", before, after)
	}

	fixed := e.push(map[string]string{"deploy/overlays/dev/kustomization.yaml": kustomizeRepo()["deploy/overlays/dev/kustomization.yaml"]}, "Back to the overlay")
	if cr := e.completed(fixed, devHydrate); cr.Conclusion != "success" {
		t.Fatalf("fixed = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	noViolations(t, e.GitHub)
}
