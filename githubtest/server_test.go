package githubtest

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/bradleyfalzon/ghinstallation/v2"
	"github.com/google/go-github/v60/github"
)

// clientFor returns a go-github client authenticated as the App's installation.
func clientFor(t *testing.T, srv *Server) *github.Client {
	t.Helper()
	itr, err := ghinstallation.New(http.DefaultTransport, srv.AppID(), srv.InstallationID(), srv.PrivateKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	itr.BaseURL = strings.TrimSuffix(srv.APIURL(), "/")
	c, err := github.NewClient(&http.Client{Transport: itr}).WithEnterpriseURLs(srv.APIURL(), srv.APIURL())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// recordingTB records errors instead of failing, for tests of refusals.
type recordingTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

func (r *recordingTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, format)
}

func (r *recordingTB) Helper() {}

func TestAppAuthAndRepo(t *testing.T) {
	srv := NewServer(t)
	srv.AddRepo("acme", "infra")
	atr, err := ghinstallation.NewAppsTransport(http.DefaultTransport, srv.AppID(), srv.PrivateKeyPEM())
	if err != nil {
		t.Fatal(err)
	}
	atr.BaseURL = strings.TrimSuffix(srv.APIURL(), "/")
	appClient, _ := github.NewClient(&http.Client{Transport: atr}).WithEnterpriseURLs(srv.APIURL(), srv.APIURL())
	ctx := context.Background()
	app, _, err := appClient.Apps.Get(ctx, "")
	if err != nil || app.GetSlug() != "strata-test" {
		t.Fatalf("GET /app = %v, %v", app, err)
	}
	inst, _, err := appClient.Apps.FindRepositoryInstallation(ctx, "acme", "infra")
	if err != nil || inst.GetID() != srv.InstallationID() {
		t.Fatalf("installation = %v, %v", inst, err)
	}
	c := clientFor(t, srv)
	repo, resp, err := c.Repositories.Get(ctx, "acme", "infra")
	if err != nil || repo.GetDefaultBranch() != "main" || repo.GetOwner().GetLogin() != "acme" {
		t.Fatalf("repo = %v, %v", repo, err)
	}
	if resp.Rate.Limit != 5000 || resp.Rate.Remaining >= 5000 {
		t.Errorf("rate = %+v", resp.Rate)
	}
	// Without credentials, 401.
	plain, _ := github.NewClient(nil).WithEnterpriseURLs(srv.APIURL(), srv.APIURL())
	if _, resp, err := plain.Repositories.Get(ctx, "acme", "infra"); err == nil || resp.StatusCode != 401 {
		t.Errorf("unauthenticated: %v", err)
	}
	// The manifest flow converts a registered code once.
	srv.AddManifestCode("abc")
	cfg, _, err := plain.Apps.CompleteAppManifest(ctx, "abc")
	if err != nil || cfg.GetPEM() == "" || cfg.GetWebhookSecret() == "" || cfg.GetSlug() != "strata-test" {
		t.Fatalf("manifest = %v, %v", cfg, err)
	}
	if _, resp, _ := plain.Apps.CompleteAppManifest(ctx, "abc"); resp.StatusCode != 404 {
		t.Errorf("second conversion: %d", resp.StatusCode)
	}
}

func TestGitDataAndContents(t *testing.T) {
	srv := NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	base := repo.Commit("main", map[string]string{"infra/network/main.tf": "a\n", "deploy/dev/k.yaml": "k: 1\n"}, "add layers")
	ctx := context.Background()
	c := clientFor(t, srv)

	f, _, _, err := c.Repositories.GetContents(ctx, "acme", "infra", "infra/network/main.tf", &github.RepositoryContentGetOptions{Ref: "main"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := f.GetContent(); got != "a\n" {
		t.Errorf("content = %q", got)
	}
	_, dir, _, err := c.Repositories.GetContents(ctx, "acme", "infra", "infra", nil)
	if err != nil || len(dir) != 1 || dir[0].GetType() != "dir" {
		t.Errorf("dir = %v, %v", dir, err)
	}
	if _, _, resp, _ := c.Repositories.GetContents(ctx, "acme", "infra", "nope.txt", nil); resp.StatusCode != 404 {
		t.Errorf("missing file: %d", resp.StatusCode)
	}

	// Commit through the Git database API, as hydration does.
	ref, _, err := c.Git.GetRef(ctx, "acme", "infra", "heads/main")
	if err != nil || ref.GetObject().GetSHA() != base {
		t.Fatalf("ref = %v, %v", ref, err)
	}
	blob, _, err := c.Git.CreateBlob(ctx, "acme", "infra", &github.Blob{Content: github.String("x: 2\n"), Encoding: github.String("utf-8")})
	if err != nil {
		t.Fatal(err)
	}
	tree, _, err := c.Git.CreateTree(ctx, "acme", "infra", base, []*github.TreeEntry{
		{Path: github.String("dev/out/all.yaml"), Mode: github.String("100644"), Type: github.String("blob"), SHA: blob.SHA},
	})
	if err != nil {
		t.Fatal(err)
	}
	parent, _, _ := c.Git.GetCommit(ctx, "acme", "infra", base)
	commit, _, err := c.Git.CreateCommit(ctx, "acme", "infra", &github.Commit{Message: github.String("hydrate"), Tree: tree, Parents: []*github.Commit{parent}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Git.UpdateRef(ctx, "acme", "infra", &github.Reference{Ref: github.String("refs/heads/main"), Object: &github.GitObject{SHA: commit.SHA}}, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := repo.FileAt("main", "dev/out/all.yaml"); got != "x: 2\n" {
		t.Errorf("hydrated file = %q", got)
	}
	if got := repo.Tree("main"); len(got) != 4 {
		t.Errorf("tree = %v", got)
	}
	full, _, err := c.Git.GetTree(ctx, "acme", "infra", commit.GetSHA(), true)
	if err != nil || len(full.Entries) < 6 {
		t.Errorf("recursive tree = %v, %v", full, err)
	}

	// A non-fast-forward update is refused unless forced.
	_, resp, err := c.Git.UpdateRef(ctx, "acme", "infra", &github.Reference{Ref: github.String("refs/heads/main"), Object: &github.GitObject{SHA: &base}}, false)
	if err == nil || resp.StatusCode != 422 || !strings.Contains(err.Error(), "not a fast forward") {
		t.Errorf("non-fast-forward: %v", err)
	}
	if _, _, err := c.Git.UpdateRef(ctx, "acme", "infra", &github.Reference{Ref: github.String("refs/heads/main"), Object: &github.GitObject{SHA: &base}}, true); err != nil {
		t.Errorf("forced: %v", err)
	}

	// Branches with slashes; compare.
	if _, _, err := c.Git.CreateRef(ctx, "acme", "infra", &github.Reference{Ref: github.String("refs/heads/feat/x"), Object: &github.GitObject{SHA: commit.SHA}}); err != nil {
		t.Fatal(err)
	}
	cmp, _, err := c.Repositories.CompareCommits(ctx, "acme", "infra", "main", "feat/x", nil)
	if err != nil || cmp.GetStatus() != "ahead" || cmp.GetAheadBy() != 1 || len(cmp.Files) != 1 {
		t.Errorf("compare = %v, %v", cmp, err)
	}
	refs, _, err := c.Git.ListMatchingRefs(ctx, "acme", "infra", &github.ReferenceListOptions{Ref: "heads/feat"})
	if err != nil || len(refs) != 1 {
		t.Errorf("matching refs = %v, %v", refs, err)
	}
	if _, err := c.Git.DeleteRef(ctx, "acme", "infra", "heads/feat/x"); err != nil || repo.Branch("feat/x") != "" {
		t.Errorf("delete ref: %v", err)
	}
}

func TestTarball(t *testing.T) {
	srv := NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	sha := repo.Commit("main", map[string]string{"a/b/c.tf": "x"}, "c")
	c := clientFor(t, srv)
	u, _, err := c.Repositories.GetArchiveLink(context.Background(), "acme", "infra", github.Tarball, &github.RepositoryContentGetOptions{Ref: sha}, 0)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	gz, err := gzip.NewReader(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err != nil {
			break
		}
		names = append(names, h.Name)
	}
	want := "acme-infra-" + sha[:7] + "/a/b/c.tf"
	if !strings.Contains(strings.Join(names, ","), want) {
		t.Errorf("tar entries %v, want %s", names, want)
	}
	if n := srv.TarballDownloads("acme", "infra", sha); n != 1 {
		t.Errorf("downloads = %d", n)
	}
}
