package helm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// evilTree is a fetched tree holding the chart charts/api (two test hooks,
// ci-values.yaml), and a directory outside it with a chart and values of
// its own, "stolen" in both.
func evilTree(t *testing.T) (root, outside string) {
	t.Helper()
	dir, _ := twoHooks(t) // <tmp>/api
	root = t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(dir, filepath.Join(root, "charts", "api")); err != nil {
		t.Fatal(err)
	}
	outside = t.TempDir()
	for name, text := range map[string]string{
		"chart/Chart.yaml":          "apiVersion: v2\nname: stolen\nversion: 0.1.0\n",
		"chart/templates/cm.yaml":   "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen}\n",
		"values.yaml":               "greeting: stolen\n",
		"dep/Chart.yaml":            "apiVersion: v2\nname: dep\nversion: 0.1.0\n",
		"dep/templates/secret.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: stolen-dep}\n",
	} {
		p := filepath.Join(outside, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root, outside
}

func treeInput(root string) Input {
	in := input(filepath.Join(root, "charts", "api"), filepath.Join(root, "charts", "api", "ci-values.yaml"))
	in.Root = root
	return in
}

// A PR's chart or values that reach out of the fetched tree, by a symlink
// (the chart dir, a file of the chart, a vendored dependency, a values
// file) or by .., are refused with the path named; nothing is installed.
func TestChartAndValuesOutsideTheTreeAreRefused(t *testing.T) {
	for name, c := range map[string]struct {
		link, target string // link in the tree -> target outside ("" for none)
		change       func(in *Input, root, outside string)
		names        string
	}{
		"chart dir symlinked out": {link: "charts/evil", target: "chart",
			change: func(in *Input, root, _ string) { in.ChartDir = filepath.Join(root, "charts", "evil") }, names: "charts/evil"},
		"chart file symlinked to /etc/passwd": {link: "charts/api/files/passwd", target: "/etc/passwd", names: "charts/api/files/passwd"},
		"dependency in charts/ symlinked out": {link: "charts/api/charts/dep", target: "dep", names: "charts/api/charts/dep"},
		"values file symlinked out": {link: "envs/ci.yaml", target: "values.yaml", names: "envs/ci.yaml",
			change: func(in *Input, root, _ string) { in.ValuesFiles = []string{filepath.Join(root, "envs", "ci.yaml")} }},
		"values file with ..": {change: func(in *Input, root, outside string) {
			in.ValuesFiles = []string{root + "/charts/../../" + filepath.Base(outside) + "/values.yaml"}
		}, names: "values.yaml"},
		"values file /etc/passwd": {change: func(in *Input, _, _ string) { in.ValuesFiles = []string{"/etc/passwd"} }, names: "/etc/passwd"},
	} {
		t.Run(name, func(t *testing.T) {
			root, outside := evilTree(t)
			in := treeInput(root)
			if c.link != "" {
				target := c.target
				if !filepath.IsAbs(target) {
					target = filepath.Join(outside, target)
				}
				link := filepath.Join(root, filepath.FromSlash(c.link))
				if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
					t.Fatal(err)
				}
				_ = os.Remove(link)
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
			}
			if c.change != nil {
				c.change(&in, root, outside)
			}
			cluster := newCluster()
			cfg := newConfig(t, cluster)
			rep, err := Test(context.Background(), cfg, cluster, in)
			if err == nil {
				t.Fatalf("installed and tested from outside the tree: %s", rep.Status)
			}
			t.Logf("refused: %v", err)
			if !errors.Is(err, ErrOutsideTree) || !strings.Contains(err.Error(), c.names) {
				t.Errorf("err = %v, want ErrOutsideTree naming %s", err, c.names)
			}
			if rep != nil {
				t.Errorf("a report for a refused chart: %+v", rep)
			}
			if strings.Contains(err.Error(), "stolen") || strings.Contains(err.Error(), "root:x:") || strings.Contains(err.Error(), outside) {
				t.Errorf("the error shows what is outside the tree")
			}
			if _, err := cfg.Releases.Last("api-pr-7"); err == nil {
				t.Error("the release was installed")
			}
		})
	}
}

// Symlinks that stay in the tree (a chart shared between charts) are
// followed as Helm follows them.
func TestSymlinkInsideTheTreeIsFollowedByTheChartLoader(t *testing.T) {
	root, _ := evilTree(t)
	common := filepath.Join(root, "charts", "common")
	if err := os.MkdirAll(filepath.Join(common, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(common, "Chart.yaml"), []byte("apiVersion: v2\nname: common\nversion: 0.1.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "charts", "api", "charts"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../common", filepath.Join(root, "charts", "api", "charts", "common")); err != nil {
		t.Fatal(err)
	}
	c := newCluster()
	rep := mustTest(t, newConfig(t, c), c, treeInput(root))
	if !rep.Passed() {
		t.Fatalf("report: %+v", rep)
	}
}

// Dependencies are never downloaded: not from a chart repository, not
// from file:// outside the tree. Only what charts/ vendors is loaded.
func TestChartDependenciesAreNeverFetched(t *testing.T) {
	var hits atomic.Int64
	repo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	t.Cleanup(repo.Close)
	for _, repository := range []string{repo.URL, "file://../../../outside/dep", "oci://" + strings.TrimPrefix(repo.URL, "http://") + "/charts"} {
		root, _ := evilTree(t)
		chartYAML := "apiVersion: v2\nname: api\nversion: 1.2.3\ndependencies:\n  - name: dep\n    version: 0.1.0\n    repository: " + repository + "\n"
		if err := os.WriteFile(filepath.Join(root, "charts", "api", "Chart.yaml"), []byte(chartYAML), 0o644); err != nil {
			t.Fatal(err)
		}
		c := newCluster()
		_, err := Test(context.Background(), newConfig(t, c), c, treeInput(root))
		if err == nil || !strings.Contains(err.Error(), "vendor them into charts/") {
			t.Errorf("%s: err = %v, want the missing dependency", repository, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("%d requests reached the chart repository", n)
	}
}
