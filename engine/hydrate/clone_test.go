package hydrate

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"strata.dev/strata/engine/hydrate/hydratetest"
	"strata.dev/strata/tooltest"
)

// gitServer serves bare repositories under its root over git's smart HTTP
// protocol (git http-backend), counting requests.
type gitServer struct {
	*httptest.Server
	root string
	hits atomic.Int64
}

func newGitServer(t *testing.T) *gitServer {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		tooltest.Missing(t, "git on PATH", err)
	}
	out, err := exec.Command(git, "--exec-path").Output()
	if err != nil {
		tooltest.Missing(t, "git --exec-path", err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		tooltest.Missing(t, "git-http-backend", err)
	}
	g := &gitServer{root: t.TempDir()}
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + g.root, "GIT_HTTP_EXPORT_ALL=1"},
		Stderr: io.Discard} // kustomize first asks for the URL as a file, which git refuses aloud
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.hits.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

// repo creates the bare repository name (acme/base.git) holding files on
// its main branch.
func (g *gitServer) repo(t *testing.T, name string, files map[string]string) {
	t.Helper()
	work := t.TempDir()
	if err := hydratetest.WriteFiles(work, files); err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(g.root, name)
	for _, args := range [][]string{
		{"init", "-q", "-b", "main", work},
		{"-C", work, "add", "."},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-q", "-m", "base"},
		{"clone", "-q", "--bare", work, bare},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
}

// A remote base the server allows is cloned by kustomize and built; a
// remote reference inside it that the server does not allow is refused,
// naming the clone's kustomization, before anything reaches that server;
// the clones are removed after the build.
func TestAllowedRemoteBaseIsClonedAndCheckedToo(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir()) // where kustomize clones, to see it clean up
	g := newGitServer(t)
	evil := countingServer(t, remoteConfigMap)
	g.repo(t, "acme/base.git", map[string]string{
		"deploy/kustomization.yaml": "resources: [cm.yaml]\n",
		"deploy/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-base}\n",
		"sneaky/kustomization.yaml": "resources:\n- cm.yaml\n- " + evil.URL + "/evil.yaml\n",
		"sneaky/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: sneaky}\n",
	})
	host := strings.TrimPrefix(g.URL, "http://")

	in := evilInput(t, "resources:\n- "+g.URL+"/acme/base.git//deploy?ref=main&submodules=false\n", nil)
	in.AllowRemote = []string{host + "/acme/*"}
	res, err := Hydrate(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := res.Files["configmap_from-base.yaml"]; !ok || g.hits.Load() == 0 {
		t.Errorf("files = %v, %d git requests", sortedKeys(res.Files), g.hits.Load())
	}
	for _, input := range res.Inputs {
		if strings.HasPrefix(input, "..") || strings.HasPrefix(input, "/") {
			t.Errorf("a clone's file is recorded as an input of the repository: %s", input)
		}
	}

	in = evilInput(t, "resources:\n- "+g.URL+"/acme/base.git//sneaky?ref=main&submodules=false\n", nil)
	in.AllowRemote = []string{host + "/acme/*"}
	_, err = Hydrate(context.Background(), in)
	t.Logf("refused: %v", err)
	if !errors.Is(err, ErrRemote) || !strings.Contains(err.Error(), "/acme/base.git//sneaky/kustomization.yaml") ||
		!strings.Contains(err.Error(), evil.URL+"/evil.yaml") {
		t.Errorf("err = %v, want ErrRemote naming the clone's kustomization and the reference", err)
	}
	if n := evil.hits.Load(); n != 0 {
		t.Errorf("%d requests reached the server the clone named", n)
	}
	if left, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), clonePrefix+"*")); len(left) > 0 {
		t.Errorf("clones left behind: %v", left)
	}
}
