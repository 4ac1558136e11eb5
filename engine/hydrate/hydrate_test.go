package hydrate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"strata.dev/strata/engine/hydrate/hydratetest"
)

const commit = "0123456789abcdef0123456789abcdef01234567"

// appRepo is hydratetest's repository with a base, a component and a dev
// overlay, plus a directory no kustomization uses.
var appRepo = func() map[string]string {
	files := hydratetest.AppRepo()
	files["deploy/unused/extra.yaml"] = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: extra}\n"
	return files
}()

func writeRepo(t testing.TB, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	if err := hydratetest.WriteFiles(root, files); err != nil {
		t.Fatal(err)
	}
	return root
}

func devInput(root string) Input {
	return Input{
		Sync:         "dev",
		Root:         root,
		Source:       "deploy/overlays/dev",
		SourceRepo:   "acme/app",
		SourceCommit: commit,
		Images:       []ImageRule{{Name: "ghcr.io/acme/api", Tag: TagSourceCommit}},
	}
}

func TestHydrateOverlayWithPatchesComponentAndGenerator(t *testing.T) {
	res, err := Hydrate(context.Background(), devInput(writeRepo(t, appRepo)))
	if err != nil {
		t.Fatal(err)
	}

	var names []string
	var configMap string
	for name := range res.Files {
		names = append(names, name)
		if strings.HasPrefix(name, "configmap_dev_app-config-") {
			configMap = name
		}
	}
	slices.Sort(names)
	want := []string{".strata-sync.yaml", configMap, "deployment_dev_api.yaml", "namespace_dev.yaml", "service_dev_api.yaml", "servicemonitor_dev_api.yaml"}
	if configMap == "" || !slices.Equal(names, want) {
		t.Fatalf("files = %v, want %v (config map with a hash suffix)", names, want)
	}
	if res.Resources != 5 || !slices.Equal(res.Kinds, []string{"ConfigMap", "Deployment", "Namespace", "Service", "ServiceMonitor"}) {
		t.Errorf("resources = %d, kinds = %v", res.Resources, res.Kinds)
	}

	deploy := string(res.Files["deployment_dev_api.yaml"])
	for _, s := range []string{
		"replicas: 3",                       // strategic merge patch
		"image: ghcr.io/acme/api:" + commit, // tag: source-commit
		"image: busybox:1.37",               // the overlay's images transformer
		"name: " + strings.TrimSuffix(strings.TrimPrefix(configMap, "configmap_dev_"), ".yaml"), // generator's hash suffix, referenced
		"strata.dev/source-commit: '" + commit + "'",
		"namespace: dev",
	} {
		if !strings.Contains(deploy, s) {
			t.Errorf("deployment lacks %q:\n%s", s, deploy)
		}
	}
	if svc := string(res.Files["service_dev_api.yaml"]); !strings.Contains(svc, "port: 8080") {
		t.Errorf("JSON 6902 patch not applied:\n%s", svc)
	}
	for name, content := range res.Files {
		if name != SyncStateFile && !strings.Contains(string(content), SourceCommitAnnotation) {
			t.Errorf("%s is not annotated", name)
		}
	}

	state, err := ParseSyncState(res.Files[SyncStateFile])
	if err != nil {
		t.Fatal(err)
	}
	if state.SourceRepo != "acme/app" || state.SourceCommit != commit || state.Source != "deploy/overlays/dev" {
		t.Errorf("sync state = %+v", state)
	}
}

func TestInputsAreTheFilesKustomizeRead(t *testing.T) {
	res, err := Hydrate(context.Background(), devInput(writeRepo(t, appRepo)))
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range []string{
		"deploy/overlays/dev/kustomization.yaml",
		"deploy/overlays/dev/replicas.yaml",
		"deploy/base/deployment.yaml",
		"deploy/components/monitoring/monitor.yaml",
	} {
		if !slices.Contains(res.Inputs, in) {
			t.Errorf("inputs lack %s: %v", in, res.Inputs)
		}
	}
	t.Logf("inputs: %v", res.Inputs)
	if !slices.IsSorted(res.Inputs) {
		t.Errorf("inputs not sorted: %v", res.Inputs)
	}
	for _, in := range res.Inputs {
		if strings.HasPrefix(in, "deploy/unused") || strings.HasPrefix(in, "/") || strings.HasPrefix(in, "..") {
			t.Errorf("unexpected input %s", in)
		}
	}

	cases := []struct {
		changed []string
		want    bool
	}{
		{[]string{"deploy/unused/extra.yaml", "README.md"}, false},
		{[]string{"deploy/overlays/dev/replicas.yaml"}, true},
		{[]string{"deploy/base/deployment.yaml"}, true},
	}
	for _, c := range cases {
		if got := InputsChanged(res.Inputs, c.changed); got != c.want {
			t.Errorf("InputsChanged(%v) = %v, want %v", c.changed, got, c.want)
		}
	}
	if !InputsChanged(nil, []string{"anything"}) {
		t.Error("the first hydration must always run")
	}
	if !InputsChanged([]string{"deploy/base/", "x.yaml"}, []string{"deploy/base/new.yaml"}) {
		t.Error("a new file in a listed directory must count")
	}
}

func TestHydrateTwiceGivesIdenticalBytes(t *testing.T) {
	root := writeRepo(t, appRepo)
	a, err := Hydrate(context.Background(), devInput(root))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Hydrate(context.Background(), devInput(root))
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(a.Files, b.Files); d != "" || len(a.Files) != len(b.Files) {
		t.Fatalf("two hydrations differ:\n%s", d)
	}
	if !slices.Equal(a.Inputs, b.Inputs) {
		t.Errorf("inputs differ: %v vs %v", a.Inputs, b.Inputs)
	}
}

func TestBuildErrorCarriesKustomizeMessage(t *testing.T) {
	files := map[string]string{
		"deploy/broken/kustomization.yaml": "resources:\n- missing.yaml\n",
	}
	in := devInput(writeRepo(t, files))
	in.Source = "deploy/broken"
	_, err := Hydrate(context.Background(), in)
	var herr *Error
	if !errors.As(err, &herr) || herr.Sync != "dev" || herr.Source != "deploy/broken" {
		t.Fatalf("err = %v, want a hydrate *Error for sync dev", err)
	}
	if msg := err.Error(); !strings.Contains(msg, `sync "dev" (deploy/broken)`) || !strings.Contains(msg, "missing.yaml") {
		t.Errorf("error lacks the sync or kustomize's message: %s", msg)
	}
}

func TestSourceEscapingTheTreeIsRefused(t *testing.T) {
	outside := t.TempDir()
	if err := hydratetest.WriteFiles(outside, map[string]string{
		"kustomization.yaml": "resources:\n- secret.yaml\n",
		"secret.yaml":        "apiVersion: v1\nkind: Secret\nmetadata: {name: stolen}\n",
	}); err != nil {
		t.Fatal(err)
	}
	root := writeRepo(t, map[string]string{
		"deploy/sneaky/kustomization.yaml": "resources:\n- ../link\n",
	})
	if err := os.Symlink(outside, filepath.Join(root, "deploy/link")); err != nil {
		t.Fatal(err)
	}

	for _, source := range []string{"../x", "deploy/../../x", "/etc", "deploy/link", "deploy/sneaky"} {
		in := devInput(root)
		in.Source = source
		res, err := Hydrate(context.Background(), in)
		if err == nil {
			t.Errorf("source %s: hydrated %d resources from outside the tree", source, res.Resources)
			continue
		}
		t.Logf("source %s: %v", source, err)
		if strings.Contains(err.Error(), "stolen") {
			t.Errorf("source %s: error shows content from outside: %v", source, err)
		}
	}
}

func TestPinWithoutResolverFails(t *testing.T) {
	in := devInput(writeRepo(t, appRepo))
	in.Images = []ImageRule{{Name: "ghcr.io/acme/api", Pin: PinDigest}}
	if _, err := Hydrate(context.Background(), in); !errors.Is(err, errNoResolver) {
		t.Fatalf("err = %v, want errNoResolver", err)
	}
}

// FilesAt names another source commit and changes nothing else: the image
// tags the source commit set stay, and naming the commit hydrated gives
// Files back byte for byte.
func TestFilesAtRenamesOnlyTheSourceCommit(t *testing.T) {
	res, err := Hydrate(context.Background(), devInput(writeRepo(t, appRepo)))
	if err != nil {
		t.Fatal(err)
	}
	same, err := res.FilesAt(commit)
	if err != nil {
		t.Fatal(err)
	}
	if len(same) != len(res.Files) {
		t.Fatalf("FilesAt(the same commit) has %d files, want %d", len(same), len(res.Files))
	}
	for name, content := range res.Files {
		if string(same[name]) != string(content) {
			t.Errorf("FilesAt(the same commit)[%s] =\n%s\nwant\n%s", name, same[name], content)
		}
	}
	const older = "fedcba9876543210fedcba9876543210fedcba98"
	at, err := res.FilesAt(older)
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range res.Files {
		want := strings.ReplaceAll(string(content), "strata.dev/source-commit: '"+commit+"'", "strata.dev/source-commit: '"+older+"'")
		if name == SyncStateFile {
			want = strings.ReplaceAll(string(content), "sourceCommit: "+commit, "sourceCommit: "+older)
		}
		if string(at[name]) != want {
			t.Errorf("FilesAt(older)[%s] =\n%s\nwant\n%s", name, at[name], want)
		}
	}
	if dep := string(at["deployment_dev_api.yaml"]); !strings.Contains(dep, "ghcr.io/acme/api:"+commit) {
		t.Errorf("the image tagged with the source commit changed:\n%s", dep)
	}
	if again, _ := res.FilesAt(commit); string(again["deployment_dev_api.yaml"]) != string(res.Files["deployment_dev_api.yaml"]) {
		t.Error("FilesAt changed the result it was called on")
	}
}
