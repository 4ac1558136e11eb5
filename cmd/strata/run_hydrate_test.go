package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/engine/hydrate/hydratetest"
)

const hydrateCommit = "0123456789abcdef0123456789abcdef01234567"

// hydrateCheckout is the kustomize app of hydratetest with a sync `dev`
// of its dev overlay into hydrated/dev.
func hydrateCheckout(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	files := hydratetest.AppRepo()
	files[".strata.yaml"] = "version: 1\nsyncs:\n  - name: dev\n    source: deploy/overlays/dev\n    dest: {branch: hydrated, path: hydrated/dev}\n"
	if err := hydratetest.WriteFiles(root, files); err != nil {
		t.Fatal(err)
	}
	return root
}

// strata run hydrate prints the manifests the server would commit: the
// overlay built, annotated with the source commit, as one YAML stream.
func TestRunHydratePrintsTheManifests(t *testing.T) {
	root := hydrateCheckout(t)
	code, tr := cli(t, "", "run", "hydrate", "dev", "--repo", root, "--source-commit", hydrateCommit)
	out := tr.out.String()
	if code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", code, out, tr.err.String())
	}
	for _, want := range []string{
		"---\n# deployment_dev_api.yaml\napiVersion: apps/v1\nkind: Deployment\n",
		"    strata.dev/source-commit: '" + hydrateCommit + "'\n",
		"  replicas: 3\n",
		"        image: busybox:1.37\n",
		"---\n# service_dev_api.yaml\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "\n---\n")+1 != 5 || strings.Contains(out, "sourceCommit:") {
		t.Errorf("want the 5 resources and not the sync's state file:\n%s", out)
	}
	want := "Hydrated sync dev from deploy/overlays/dev at " + hydrateCommit + ": 5 resources (ConfigMap, Deployment, Namespace, Service, ServiceMonitor)\n"
	if tr.err.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", tr.err.String(), want)
	}
}

// --diff shows what a hydration would commit into the destination: only
// the file a change of the overlay changes, or every file when the
// destination is not there.
func TestRunHydrateDiff(t *testing.T) {
	root := hydrateCheckout(t)
	res, err := hydrate.Hydrate(context.Background(), hydrate.Input{Sync: "dev", Root: root, Source: "deploy/overlays/dev", SourceRepo: "local", SourceCommit: hydrateCommit})
	if err != nil {
		t.Fatal(err)
	}

	code, tr := cli(t, "", "run", "hydrate", "dev", "--repo", root, "--source-commit", hydrateCommit, "--diff")
	if code != 0 || strings.Count(tr.out.String(), "--- /dev/null\n") != len(res.Files) || !strings.Contains(tr.err.String(), "hydrated/dev does not exist: every file shows as added") {
		t.Fatalf("no destination: exit %d, want %d files added\nstdout: %s\nstderr: %s", code, len(res.Files), tr.out.String(), tr.err.String())
	}

	dest := filepath.Join(root, "hydrated", "dev")
	for name, content := range res.Files {
		if err := os.MkdirAll(dest, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dest, name), content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, tr = cli(t, "", "run", "hydrate", "dev", "--repo", root, "--source-commit", hydrateCommit, "--diff")
	if code != 0 || tr.out.Len() > 0 || !strings.Contains(tr.err.String(), "No changes: "+dest+" already holds these files") {
		t.Fatalf("destination up to date: exit %d\nstdout: %s\nstderr: %s", code, tr.out.String(), tr.err.String())
	}

	if err := os.WriteFile(filepath.Join(root, "deploy/overlays/dev/replicas.yaml"), []byte(hydratetest.Replicas(5)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dest, "stale.yaml"), []byte("kind: ConfigMap\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, tr = cli(t, "", "run", "hydrate", "dev", "--repo", root, "--source-commit", hydrateCommit, "--diff")
	want := "--- a/deployment_dev_api.yaml\n+++ b/deployment_dev_api.yaml\n@@ -6,7 +6,7 @@\n" +
		"   annotations:\n     strata.dev/source-commit: '" + hydrateCommit + "'\n spec:\n-  replicas: 3\n+  replicas: 5\n" +
		"   selector:\n     matchLabels: {app: api}\n   template:\n" +
		"--- a/stale.yaml\n+++ /dev/null\n@@ -1,2 +1 @@\n-kind: ConfigMap\n \n" // hydrate.Diff's deletion, as the PR preview shows it
	if code != 0 || tr.out.String() != want {
		t.Fatalf("replicas 3 -> 5: exit %d\nstdout:\n%s\nwant:\n%s\nstderr: %s", code, tr.out.String(), want, tr.err.String())
	}
}
