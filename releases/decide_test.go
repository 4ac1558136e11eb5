package releases

import (
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/release"
	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
)

var (
	srv = &config.Server{Clusters: []config.Cluster{{Name: "ci", Kubeconfig: "/k/ci"}, {Name: "prod", Kubeconfig: "/k/prod"}}}
	api = config.Release{Name: "api", Chart: "charts/api", ReleaseName: "api-pr-{pr}", Namespace: "ci", Cluster: "ci",
		CleanupOnClose: true, Test: config.ReleaseTest{Filters: []string{"smoke"}}}
	web = config.Release{Name: "web", Chart: "charts/web", ReleaseName: "web", Namespace: "ci", Cluster: "ci"}
)

func repoOf(rels ...config.Release) *config.Repo { return &config.Repo{Version: 1, Releases: rels} }

// /helm-test RELEASE...: the releases named, or all.
func TestPickReleases(t *testing.T) {
	all := []config.Release{api, web}
	for _, tc := range []struct {
		named   []string
		want    []string
		refused string
	}{
		{nil, []string{"api", "web"}, ""},
		{[]string{"web"}, []string{"web"}, ""},
		{[]string{"web", "web"}, []string{"web"}, ""},
		{[]string{"db"}, nil, "no release `db`"},
	} {
		got, err := pickReleases(all, tc.named)
		var names []string
		for _, r := range got {
			names = append(names, r.Name)
		}
		if tc.refused != "" {
			if err == nil || !strings.Contains(err.Error(), tc.refused) {
				t.Errorf("%v: %v, %v; want a refusal with %q", tc.named, names, err, tc.refused)
			}
			continue
		}
		if err != nil || !slices.Equal(names, tc.want) {
			t.Errorf("%v: %v, %v; want %v", tc.named, names, err, tc.want)
		}
	}
}

// Where a run installs is the default branch's say, and clusters only the
// server's.
func TestReleaseSpec(t *testing.T) {
	elsewhere := api
	elsewhere.Cluster = "laptop"
	for _, tc := range []struct {
		name    string
		base    *config.Repo
		rel     config.Release
		filters []string
		want    jobs.ReleaseSpec
		refused string
	}{
		{name: "defined on the default branch", base: repoOf(api), rel: api,
			want: jobs.ReleaseSpec{Name: "api", Chart: "charts/api", ReleaseName: "api-pr-7", Namespace: "ci", Cluster: "ci", Filters: []string{"smoke"}}},
		{name: "a comment's filters win", base: repoOf(api), rel: api, filters: []string{"deep"},
			want: jobs.ReleaseSpec{Name: "api", Chart: "charts/api", ReleaseName: "api-pr-7", Namespace: "ci", Cluster: "ci", Filters: []string{"deep"}}},
		{name: "only the PR defines it", base: repoOf(web), rel: api, refused: "not on the default branch"},
		{name: "no default-branch config", base: nil, rel: api, refused: "not on the default branch"},
		{name: "a cluster the server lacks", base: repoOf(elsewhere), rel: elsewhere, refused: "`laptop`, which this Strata server does not define"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := releaseSpec(srv, tc.base, tc.rel, 7, tc.filters)
			if tc.refused != "" {
				if !strings.Contains(why, tc.refused) {
					t.Fatalf("refusal = %q, want %q", why, tc.refused)
				}
				return
			}
			if why != "" || got.Name != tc.want.Name || got.ReleaseName != tc.want.ReleaseName || got.Cluster != tc.want.Cluster ||
				got.Namespace != tc.want.Namespace || !slices.Equal(got.Filters, tc.want.Filters) {
				t.Fatalf("spec = %+v, %q; want %+v", got, why, tc.want)
			}
		})
	}
}

// A closed PR uninstalls the releases with cleanup_on_close that the
// default branch defines, as the default branch places them.
func TestCleanupTargets(t *testing.T) {
	elsewhere := api
	elsewhere.Cluster = "laptop"
	for _, tc := range []struct {
		name string
		base *config.Repo
		want []string // release names
	}{
		{name: "cleanup on close, as the default branch places it", base: repoOf(api, web), want: []string{"api-pr-7"}},
		{name: "a cluster the server lacks", base: repoOf(elsewhere), want: nil},
		{name: "nothing on the default branch", base: repoOf(), want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range cleanupTargets(srv, tc.base, 7) {
				got = append(got, s.ReleaseName)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("uninstalls %v, want %v", got, tc.want)
			}
		})
	}
}

// Cleanup uninstalls only what this PR installed: every revision in the
// release's history carries its labels.
func TestInstalledOnlyBy(t *testing.T) {
	rev := func(repo string, pr int) *release.Release { return &release.Release{Labels: ownerLabels(repo, pr)} }
	for _, tc := range []struct {
		name    string
		history []*release.Release
		want    bool
	}{
		{"installed and upgraded by this PR", []*release.Release{rev("acme/infra", 7), rev("acme/infra", 7)}, true},
		{"upgraded by another PR since", []*release.Release{rev("acme/infra", 7), rev("acme/infra", 8)}, false},
		{"installed by another PR", []*release.Release{rev("acme/infra", 8), rev("acme/infra", 7)}, false},
		{"same PR number in another repo", []*release.Release{rev("acme/other", 7)}, false},
		{"installed outside Strata", []*release.Release{{Labels: map[string]string{"team": "web"}}}, false},
		{"no history", nil, false},
	} {
		if got := installedOnlyBy(tc.history, "acme/infra", 7); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
