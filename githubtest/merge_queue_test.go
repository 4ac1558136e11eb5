package githubtest

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-github/v60/github"
)

// Two pull requests queued as one group: the group's head merges both on
// the base, its ref names the last, its merge_group payloads are what
// GitHub's schemas allow, a commit's pull requests are listed through the
// REST route, and the group merges only once its required check passed.
func TestMergeQueueGroup(t *testing.T) {
	srv := NewServer(t)
	repo := srv.AddRepo("acme", "infra")
	repo.Commit("one", map[string]string{"a.tf": "a"}, "one")
	repo.Commit("two", map[string]string{"b.tf": "b"}, "two")
	one, two := repo.OpenPR("one", "main", "alice"), repo.OpenPR("two", "main", "bob")
	base := repo.Branch("main")

	g := repo.QueueGroup(one.Number, two.Number)
	if g.BaseSHA != base || g.HeadRef != "refs/heads/gh-readonly-queue/main/pr-2-"+two.HeadSHA() || repo.Branch("gh-readonly-queue/main/pr-2-"+two.HeadSHA()) != g.HeadSHA {
		t.Fatalf("group = %+v", g)
	}
	for _, p := range []string{"a.tf", "b.tf", "README.md"} {
		if _, ok := repo.FileAt(g.HeadSHA, p); !ok {
			t.Errorf("the group's head lacks %s", p)
		}
	}
	for _, action := range []string{"checks_requested", "destroyed"} {
		p, event := g.MergeGroupEvent(action, "dequeued")
		if err := ValidateWebhook(event, p); err != nil {
			t.Errorf("%s: %v", action, err)
		}
	}

	ctx := context.Background()
	c := clientFor(t, srv)
	cmp, _, err := c.Repositories.CompareCommits(ctx, "acme", "infra", g.BaseSHA, g.HeadSHA, nil)
	if err != nil || cmp.GetTotalCommits() != 4 {
		t.Fatalf("compare = %v commits, %v", cmp.GetTotalCommits(), err)
	}
	pulls, _, err := c.PullRequests.ListPullRequestsWithCommit(ctx, "acme", "infra", two.HeadSHA(), nil)
	if err != nil || len(pulls) != 1 || pulls[0].GetNumber() != two.Number {
		t.Fatalf("pulls of #2's head = %v, %v", pulls, err)
	}
	if pulls, _, _ := c.PullRequests.ListPullRequestsWithCommit(ctx, "acme", "infra", base, nil); len(pulls) != 0 {
		t.Fatalf("pulls of the base = %v", pulls)
	}

	if err := g.Merge("strata/applied"); err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("merge without the required check: %v", err)
	}
	if _, _, err := c.Checks.CreateCheckRun(ctx, "acme", "infra", github.CreateCheckRunOptions{Name: "strata/applied", HeadSHA: g.HeadSHA,
		Status: github.String("completed"), Conclusion: github.String("success")}); err != nil {
		t.Fatal(err)
	}
	if err := g.Merge("strata/applied"); err != nil {
		t.Fatal(err)
	}
	if repo.Branch("main") != g.HeadSHA || repo.Branch("gh-readonly-queue/main/pr-2-"+two.HeadSHA()) != "" {
		t.Fatalf("after the merge: main %s, queue branch left", repo.Branch("main"))
	}
	got, _, err := c.PullRequests.Get(ctx, "acme", "infra", one.Number)
	if err != nil || !got.GetMerged() || got.GetHead().GetSHA() != one.HeadSHA() {
		t.Fatalf("#1 after the merge = merged %v head %s, %v", got.GetMerged(), got.GetHead().GetSHA(), err)
	}
	if v := srv.Violations(); len(v) != 0 {
		t.Fatalf("violations: %v", v)
	}
}
