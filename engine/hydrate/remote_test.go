package hydrate

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// counting is a loopback server that counts the requests reaching it and
// answers each with body.
type counting struct {
	*httptest.Server
	hits atomic.Int64
}

func countingServer(t *testing.T, body string) *counting {
	t.Helper()
	c := &counting{}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(c.Close)
	return c
}

const remoteConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: remote}\n"

// Every way a kustomization can name something on the network is refused
// before the build, with the file and the reference, and no request
// reaches the server.
func TestRemoteReferencesAreRefusedBeforeTheBuild(t *testing.T) {
	srv := countingServer(t, remoteConfigMap)
	host := strings.TrimPrefix(srv.URL, "http://")
	for name, c := range map[string]struct{ kustomization, ref string }{
		"resource":                {"resources:\n- " + srv.URL + "/acme/cm.yaml\n", srv.URL + "/acme/cm.yaml"},
		"remote base":             {"resources:\n- " + srv.URL + "/acme/base.git//deploy?ref=main\n", srv.URL + "/acme/base.git//deploy?ref=main"},
		"git:: base":              {"resources:\n- git::" + srv.URL + "/acme/base//deploy\n", "git::" + srv.URL + "/acme/base//deploy"},
		"ssh base":                {"resources:\n- ssh://git@" + host + "/acme/base.git\n", "ssh://git@" + host + "/acme/base.git"},
		"scp-style base":          {"resources:\n- git@" + strings.Split(host, ":")[0] + ":acme/base.git\n", "git@"},
		"github base":             {"resources:\n- github.com/acme/base//deploy?ref=v1\n", "github.com/acme/base//deploy?ref=v1"},
		"deprecated bases":        {"bases:\n- " + srv.URL + "/acme/base.git\n", srv.URL + "/acme/base.git"},
		"component":               {"components:\n- " + srv.URL + "/acme/comp.git\n", srv.URL + "/acme/comp.git"},
		"configMapGenerator file": {"configMapGenerator:\n- name: x\n  files: [" + srv.URL + "/x.properties]\n", srv.URL + "/x.properties"},
		"keyed generator file":    {"configMapGenerator:\n- name: x\n  files: [k=" + srv.URL + "/x]\n", srv.URL + "/x"},
		"generator env":           {"secretGenerator:\n- name: x\n  envs: [" + srv.URL + "/x.env]\n", srv.URL + "/x.env"},
		"patch":                   {"resources: [cm.yaml]\npatches:\n- path: " + srv.URL + "/p.yaml\n", srv.URL + "/p.yaml"},
		"openapi":                 {"resources: [cm.yaml]\nopenapi:\n  path: " + srv.URL + "/schema.json\n", srv.URL + "/schema.json"},
		"crds":                    {"resources: [cm.yaml]\ncrds: [" + srv.URL + "/crd.json]\n", srv.URL + "/crd.json"},
		"generator":               {"generators:\n- " + srv.URL + "/gen.yaml\n", srv.URL + "/gen.yaml"},
		"inline generator file": {"generators:\n- |\n  apiVersion: builtin\n  kind: ConfigMapGenerator\n  metadata: {name: x}\n  files: [" +
			srv.URL + "/x]\n", srv.URL + "/x"},
	} {
		t.Run(name, func(t *testing.T) {
			mustRefuse(t, evilInput(t, c.kustomization, nil), ErrRemote, c.ref)
		})
	}

	// Deeper: a local base's reference, and a generator config file's.
	t.Run("through a local base", func(t *testing.T) {
		in := evilInput(t, "resources:\n- ../base\n", map[string]string{
			"deploy/base/kustomization.yaml": "resources:\n- " + srv.URL + "/acme/base.git//deploy\n",
		})
		_, err := Hydrate(context.Background(), in)
		if !errors.Is(err, ErrRemote) || !strings.Contains(err.Error(), "deploy/base/kustomization.yaml") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("through a generator config file", func(t *testing.T) {
		in := evilInput(t, "generators: [gen.yaml]\n", map[string]string{
			"deploy/evil/gen.yaml": "apiVersion: builtin\nkind: ConfigMapGenerator\nmetadata: {name: x}\nfiles: [" + srv.URL + "/x]\n",
		})
		mustRefuse(t, in, ErrRemote, srv.URL+"/x")
	})
	if n := srv.hits.Load(); n != 0 {
		t.Errorf("%d requests reached the loopback server", n)
	}
}

// What the server allows is fetched by kustomize; the same host outside
// the allowed path is still refused without a request.
func TestAllowedRemoteResourceIsFetched(t *testing.T) {
	srv := countingServer(t, remoteConfigMap)
	host := strings.TrimPrefix(srv.URL, "http://")

	in := evilInput(t, "resources:\n- "+srv.URL+"/acme/cm.yaml\n", nil)
	in.AllowRemote = []string{host + "/acme/*"}
	res, err := Hydrate(context.Background(), in)
	if err != nil || res.Resources != 1 {
		t.Fatalf("res = %+v, err = %v", res, err)
	}
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}

	in = evilInput(t, "resources:\n- "+srv.URL+"/other/cm.yaml\n", nil)
	in.AllowRemote = []string{host + "/acme/*"}
	mustRefuse(t, in, ErrRemote, srv.URL+"/other/cm.yaml")
	if n := srv.hits.Load(); n != 1 {
		t.Errorf("%d requests, want still 1", n)
	}
}

// A build that does not finish (an allowed server that never answers) ends
// at the timeout, and when the job's context ends, with the build
// abandoned.
func TestBuildTimesOutAndFollowsTheJobsContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	host := strings.TrimPrefix(srv.URL, "http://")
	in := evilInput(t, "resources:\n- "+srv.URL+"/acme/cm.yaml\n", nil)
	in.AllowRemote = []string{host}

	in.Timeout = 50 * time.Millisecond
	if _, err := Hydrate(context.Background(), in); !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "hydrate.timeout") {
		t.Errorf("err = %v, want a timeout that names hydrate.timeout", err)
	}

	in.Timeout = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Hydrate(ctx, in); !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v, want the job's cancellation", err)
	}
}

func TestRemoteReferencesAndAllowPatterns(t *testing.T) {
	for _, c := range []struct {
		ref    string
		remote bool
		loc    string // "" when no pattern may cover it
	}{
		{"deployment.yaml", false, ""},
		{"../base", false, ""},
		{"https://example.com/a/b.yaml", true, "example.com/a/b.yaml"},
		{"HTTP://Example.com:8080/a", true, "example.com:8080/a"},
		{"github.com/acme/base//deploy?ref=v1", true, "github.com/acme/base/deploy"},
		{"git::https://github.com/acme/base.git//x", true, "github.com/acme/base.git/x"},
		{"git@github.com:acme/base.git", true, "github.com/acme/base.git"},
		{"ssh://git@gitlab.acme.io/acme/base.git", true, "gitlab.acme.io/acme/base.git"},
		{"file:///etc/repo", true, ""},
		{"https://github.com/acme/../evil/x", true, ""},
		{"https://github.com/acme/%2e%2e/evil", true, ""},
		{"https://github.com%2facme@evil.com/x", true, "evil.com/x"},
		{"weird:thing", true, ""},
	} {
		if got := isRemote(c.ref); got != c.remote {
			t.Errorf("isRemote(%q) = %v", c.ref, got)
		}
		if loc, _ := remoteLocation(c.ref); loc != c.loc {
			t.Errorf("remoteLocation(%q) = %q, want %q", c.ref, loc, c.loc)
		}
	}

	allow := allowList{"github.com/acme/*", "gitlab.acme.io/platform/base"}
	for ref, want := range map[string]bool{
		"github.com/acme/base//deploy?ref=v1":              true,
		"https://github.com/acme/base.git":                 true,
		"git@github.com:acme/base.git":                     true,
		"https://GitHub.com/acme/x.yaml":                   true,
		"https://github.com/evil/base":                     false,
		"https://github.com/acme":                          false,
		"https://github.com/acme/../evil/base":             false,
		"https://github.com.evil.io/acme/base":             false,
		"ssh://git@gitlab.acme.io/platform/base.git":       false,
		"ssh://git@gitlab.acme.io/platform/base//overlays": true,
		"file:///github.com/acme/base":                     false,
	} {
		if got := allow.covers(ref); got != want {
			t.Errorf("covers(%q) = %v, want %v", ref, got, want)
		}
	}
	if !(allowList{"github.com/acme/base/deploy"}).coversRepo("https://github.com/acme/base") {
		t.Error("a pattern for a path in a repository must allow cloning the repository")
	}
	if (allowList{"github.com/acme/base/deploy"}).coversRepo("https://github.com/acme/other") {
		t.Error("another repository was allowed")
	}
}
