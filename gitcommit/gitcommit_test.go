package gitcommit

import (
	"context"
	"testing"

	"github.com/google/go-github/v60/github"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/githubtest"
)

func fakeClient(t *testing.T, srv *githubtest.Server) *github.Client {
	t.Helper()
	gh, err := github.NewClient(nil).WithAuthToken(srv.Token()).WithEnterpriseURLs(srv.APIURL(), srv.APIURL())
	if err != nil {
		t.Fatal(err)
	}
	return gh
}

func parentOf(t *testing.T, gh *github.Client, sha string) string {
	t.Helper()
	c, _, err := gh.Git.GetCommit(context.Background(), "acme", "infra", sha)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Parents) == 0 {
		return ""
	}
	return c.Parents[0].GetSHA()
}

// Two hydrations race for the branch: the one whose ref update is not a
// fast forward rebuilds its commit on the new tip, keeping the other's files.
// Creating the branch races the same way.
func TestCommitCompareAndSwap(t *testing.T) {
	ctx := context.Background()
	srv := githubtest.NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	gh := fakeClient(t, srv)
	dest := Destination{Owner: "acme", Repo: "infra", Branch: "hydrated", Path: "dev"}
	w := Writer{GitHub: gh}

	// Another writer creates the branch between our read and our CreateRef.
	w.BeforeRefUpdate = func(attempt int) {
		if attempt == 1 {
			repo.Commit("hydrated", map[string]string{"prod/x.yaml": "prod\n"}, "Other sync")
		}
	}
	res, err := w.Commit(ctx, dest, map[string][]byte{"a.yaml": []byte("a\n")}, "Hydrate one", nil)
	if err != nil {
		t.Fatal(err)
	}
	tree := repo.Tree("hydrated")
	if tree["dev/a.yaml"] != "a\n" || tree["prod/x.yaml"] != "prod\n" || repo.Branch("hydrated") != res.Commit {
		t.Fatalf("after racing the branch creation: %v (tip %s, ours %s)", tree, repo.Branch("hydrated"), res.Commit)
	}

	// Another writer moves the branch between our read and our UpdateRef.
	var concurrent string
	w.BeforeRefUpdate = func(attempt int) {
		if attempt == 1 {
			concurrent = repo.Commit("hydrated", map[string]string{"prod/x.yaml": "prod v2\n"}, "Other sync again")
		}
	}
	res, err = w.Commit(ctx, dest, map[string][]byte{"b.yaml": []byte("b\n")}, "Hydrate two", nil)
	if err != nil {
		t.Fatal(err)
	}
	if parentOf(t, gh, res.Commit) != concurrent {
		t.Errorf("the retried commit is not on the concurrent tip")
	}
	tree = repo.Tree("hydrated")
	if _, ok := tree["dev/a.yaml"]; ok || tree["dev/b.yaml"] != "b\n" || tree["prod/x.yaml"] != "prod v2\n" {
		t.Errorf("after the retry: %v", tree)
	}
	if len(res.Changes) != 2 {
		t.Errorf("changes = %+v, want a.yaml deleted and b.yaml written", res.Changes)
	}

	// The same files again: no commit.
	w.BeforeRefUpdate = nil
	tip := repo.Branch("hydrated")
	res, err = w.Commit(ctx, dest, map[string][]byte{"b.yaml": []byte("b\n")}, "Hydrate three", nil)
	if err != nil || res.Commit != "" || repo.Branch("hydrated") != tip {
		t.Errorf("unchanged files committed: %+v %v", res, err)
	}
	for _, v := range srv.Violations() {
		t.Errorf("request GitHub would refuse: %s %s: %s", v.Method, v.Path, v.Err)
	}
}

// The guard sees the sync state the Destination holds, on every attempt.
func TestCommitGuardSeesDestinationState(t *testing.T) {
	ctx := context.Background()
	srv := githubtest.NewServer(t)
	srv.AddRepo("acme", "infra")
	gh := fakeClient(t, srv)
	dest := Destination{Owner: "acme", Repo: "infra", Branch: "hydrated", Path: "."}
	w := Writer{GitHub: gh}
	state := hydrate.SyncState{SourceRepo: "acme/infra", Source: "deploy", SourceCommit: "abc"}
	if _, err := w.Commit(ctx, dest, map[string][]byte{hydrate.SyncStateFile: state.Marshal()}, "one", nil); err != nil {
		t.Fatal(err)
	}
	var seen *hydrate.SyncState
	res, err := w.Commit(ctx, dest, map[string][]byte{"x.yaml": []byte("x\n")}, "two",
		func(_ context.Context, cur *hydrate.SyncState) (string, error) {
			seen = cur
			return "newer", nil
		})
	if err != nil || res.Skipped != "newer" || res.Commit != "" {
		t.Fatalf("guarded commit = %+v, %v", res, err)
	}
	if seen == nil || seen.SourceCommit != "abc" {
		t.Errorf("guard saw %+v", seen)
	}
}
