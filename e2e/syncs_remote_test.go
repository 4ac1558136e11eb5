package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
)

// loopback is a server on 127.0.0.1 that counts the requests reaching it
// and answers with a ConfigMap.
type loopback struct {
	*httptest.Server
	hits atomic.Int64
}

func newLoopback(t *testing.T) *loopback {
	t.Helper()
	l := &loopback{}
	l.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.hits.Add(1)
		_, _ = w.Write([]byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: fetched}\n"))
	}))
	t.Cleanup(l.Close)
	return l
}

// withResource is dev's kustomization with ref added to its resources.
func withResource(ref string) string {
	return strings.Replace(kustomizeRepo()["deploy/overlays/dev/kustomization.yaml"], "resources:\n", "resources:\n- "+ref+"\n", 1)
}

// A kustomization that names a URL on the network, as a resource or as a
// remote base, proposed in a PR or pushed to the default branch, is
// refused before the build: the check names the kustomization and the
// reference, no request leaves Strata, nothing is committed.
func TestSyncsRemoteReferencesAreNeverFetched(t *testing.T) {
	srv := newLoopback(t)
	e := startSyncs(t, apptest.Options{}, nil)
	good := e.push(map[string]string{"docs/README.md": "x\n"}, "First")
	e.completed(good, devHydrate)
	tip := e.Repo.Branch("hydrated")

	refused := func(what, sha, ref string) {
		t.Helper()
		cr := e.completed(sha, devHydrate)
		t.Logf("%s: %s %q\n%s", what, cr.Conclusion, cr.Title, cr.Summary)
		if cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "deploy/overlays/dev/kustomization.yaml") ||
			!strings.Contains(cr.Summary, ref) || !strings.Contains(cr.Summary, "hydrate.allow_remote") {
			t.Errorf("%s: check = %s %q, want a failure naming the kustomization and %s", what, cr.Conclusion, cr.Title, ref)
		}
	}
	for i, ref := range []string{srv.URL + "/acme/cm.yaml", srv.URL + "/acme/base.git//deploy?ref=main"} {
		branch := fmt.Sprintf("remote-%d", i)
		e.Repo.Commit(branch, map[string]string{"deploy/overlays/dev/kustomization.yaml": withResource(ref)}, "Remote "+ref)
		pr := e.Repo.OpenPR(branch, "main", "alice")
		e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
		refused("preview of a same-repo PR", pr.HeadSHA(), ref)

		pushed := e.push(map[string]string{"deploy/overlays/dev/kustomization.yaml": withResource(ref)}, "Push "+ref)
		refused("push to the default branch", pushed, ref)
	}

	if n := srv.hits.Load(); n != 0 {
		t.Errorf("%d requests reached the loopback server", n)
	}
	if e.Repo.Branch("hydrated") != tip {
		t.Error("the destination moved")
	}
	noViolations(t, e.GitHub)
}

// What the server config allows (hydrate.allow_remote) is fetched.
func TestSyncsAllowedRemoteResourceIsFetched(t *testing.T) {
	srv := newLoopback(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	e := startSyncs(t, apptest.Options{Configure: func(c *config.Server) {
		c.Hydrate.AllowRemote = []string{host + "/acme/*"}
	}}, nil)
	sha := e.push(map[string]string{"deploy/overlays/dev/kustomization.yaml": withResource(srv.URL + "/acme/cm.yaml")}, "Allowed remote")
	cr := e.completed(sha, devHydrate)
	if cr.Conclusion != "success" {
		t.Fatalf("check = %s %q\n%s", cr.Conclusion, cr.Title, cr.Summary)
	}
	if _, ok := e.hydrated("dev")["configmap_dev_fetched.yaml"]; !ok || srv.hits.Load() == 0 {
		t.Errorf("the allowed resource was not fetched: %v, %d requests", keys(e.hydrated("dev")), srv.hits.Load())
	}
	noViolations(t, e.GitHub)
}
