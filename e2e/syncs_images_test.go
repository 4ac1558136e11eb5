package e2e

import (
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/hydrate/hydratetest"
)

// An image pinned to a digest (in-memory registry): the push hydrates
// name@digest; retagging moves the tag, and the periodic moved-tag job
// rehydrates dev with a commit message naming the image that moved. An image
// tagged with the source commit and pinned resolves that tag.
func TestSyncsMovedTagRehydrates(t *testing.T) {
	host := hydratetest.Registry(t)
	image := host + "/acme/api"
	sidecar := host + "/acme/sidecar"
	first := hydratetest.PushImage(t, image+":stable")

	files := kustomizeRepo()
	files["deploy/base/deployment.yaml"] = strings.NewReplacer("ghcr.io/acme/api:v1", image+":v1", "busybox:1.36", sidecar+":x").
		Replace(files["deploy/base/deployment.yaml"])
	files["deploy/overlays/dev/kustomization.yaml"] = strings.Replace(files["deploy/overlays/dev/kustomization.yaml"],
		"images:\n- name: busybox\n  newTag: \"1.37\"\n", "", 1)
	files[".strata.yaml"] = syncsConfig + "    images:\n" +
		"      - {name: " + image + ", tag: stable, pin: digest}\n" +
		"      - {name: " + sidecar + ", tag: source-commit, pin: digest}\n"
	e := startSyncs(t, apptest.Options{Configure: func(c *config.Server) { c.RepinInterval = time.Second }}, files)

	// The sidecar's tag is the commit being hydrated: push it first.
	before := e.Repo.Branch("main")
	sha := e.Repo.Commit("main", map[string]string{"docs/README.md": "x\n"}, "Release")
	sidecarDigest := hydratetest.PushImage(t, sidecar+":"+sha)
	e.Deliver(e.Repo.PushEvent("main", before, sha))
	if cr := e.completed(sha, devHydrate); cr.Conclusion != "success" || !strings.Contains(cr.Summary, first) {
		t.Fatalf("hydrate check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	dep := e.hydrated("dev")["deployment_dev_api.yaml"]
	if !strings.Contains(dep, "image: "+image+"@"+first) || !strings.Contains(dep, "image: "+sidecar+"@"+sidecarDigest) {
		t.Fatalf("deployment not pinned:\n%s", dep)
	}
	state, _ := hydrate.ParseSyncState([]byte(e.hydrated("dev")[hydrate.SyncStateFile]))
	if len(state.Pinned) != 2 {
		t.Errorf("pinned images in the sync state = %+v", state.Pinned)
	}
	tip := e.Repo.Branch("hydrated")

	moved := hydratetest.PushImage(t, image+":stable")
	e.WaitFor(syncsWait, func() bool { return e.Repo.Branch("hydrated") != tip })
	dep = e.hydrated("dev")["deployment_dev_api.yaml"]
	if !strings.Contains(dep, "image: "+image+"@"+moved) || !strings.Contains(dep, "strata.dev/source-commit: '"+sha+"'") {
		t.Fatalf("deployment after the tag moved:\n%s", dep)
	}
	msg := e.gitCommit(e.Repo.Branch("hydrated")).GetMessage()
	if !strings.Contains(msg, image+":stable moved to "+moved) {
		t.Errorf("commit message does not name the moved image: %q", msg)
	}
	// Nothing else moves: a repin that starts once the rehydration is done
	// finds every tag where it was, and commits nothing.
	tip = e.Repo.Branch("hydrated")
	e.WaitIdle(syncsWait)
	e.nextRepin()
	e.WaitIdle(syncsWait)
	if e.Repo.Branch("hydrated") != tip {
		t.Error("rehydrated though no tag moved")
	}
	noViolations(t, e.GitHub)
}
