package hydrate

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestPlanWritesChangesAndPrunesOnlyUnderDestPath(t *testing.T) {
	dest := map[string][]byte{
		"README.md":                     []byte("keep me"),
		"dev/deployment_dev_api.yaml":   []byte("old"),
		"dev/service_dev_api.yaml":      []byte("same"),
		"dev/configmap_dev_gone.yaml":   []byte("removed resource"),
		"development/other.yaml":        []byte("another sync's path"),
		"prod/deployment_prod_api.yaml": []byte("another sync"),
	}
	files := map[string][]byte{
		"deployment_dev_api.yaml": []byte("new"),
		"service_dev_api.yaml":    []byte("same"),
		"secret_dev_new.yaml":     []byte("added"),
	}
	changes, changed := Plan(dest, "dev/", files)
	want := []FileChange{
		{Path: "dev/configmap_dev_gone.yaml", Delete: true},
		{Path: "dev/deployment_dev_api.yaml", Content: []byte("new")},
		{Path: "dev/secret_dev_new.yaml", Content: []byte("added")},
	}
	if !changed || !reflect.DeepEqual(changes, want) {
		t.Fatalf("Plan = %+v, %v; want %+v", changes, changed, want)
	}

	for _, c := range changes {
		if c.Delete {
			delete(dest, c.Path)
		} else {
			dest[c.Path] = c.Content
		}
	}
	if changes, changed := Plan(dest, "dev", files); changed || len(changes) != 0 {
		t.Fatalf("second Plan = %+v, want nothing to commit", changes)
	}
}

func TestDiffShowsAddedRemovedAndChangedFilesInOrder(t *testing.T) {
	old := map[string][]byte{
		"b_changed.yaml": []byte("a: 1\nb: 2\n"),
		"c_removed.yaml": []byte("x: 1\n"),
		"d_same.yaml":    []byte("s: 1\n"),
	}
	new := map[string][]byte{
		"a_added.yaml":   []byte("n: 1\n"),
		"b_changed.yaml": []byte("a: 1\nb: 3\n"),
		"d_same.yaml":    []byte("s: 1\n"),
	}
	d := Diff(old, new)
	for _, s := range []string{
		"--- /dev/null\n+++ b/a_added.yaml\n",
		"--- a/b_changed.yaml\n+++ b/b_changed.yaml\n",
		"-b: 2\n+b: 3\n",
		"--- a/c_removed.yaml\n+++ /dev/null\n",
	} {
		if !strings.Contains(d, s) {
			t.Errorf("diff lacks %q:\n%s", s, d)
		}
	}
	if strings.Contains(d, "d_same") {
		t.Errorf("diff shows an unchanged file:\n%s", d)
	}
	if a, b, c := strings.Index(d, "a_added"), strings.Index(d, "b_changed"), strings.Index(d, "c_removed"); !(a < b && b < c) {
		t.Errorf("files out of order:\n%s", d)
	}
	if Diff(old, old) != "" {
		t.Error("diff of identical trees is not empty")
	}
}

func TestSyncStateRoundTripsWithTakeover(t *testing.T) {
	s := SyncState{
		SourceRepo:   "acme/app",
		Source:       "deploy/overlays/dev",
		SourceCommit: commit,
		Pinned:       []PinnedImage{{Name: "ghcr.io/acme/api", Tag: "v1", Digest: "sha256:abc"}},
		Takeover:     &Takeover{PR: 42, By: "octocat", Head: commit, Until: time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)},
	}
	got, err := ParseSyncState(s.Marshal())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, s) {
		t.Fatalf("round trip = %+v, want %+v", got, s)
	}
	if _, err := ParseSyncState([]byte("sourceRepo: x\nunknown: 1\n")); err == nil {
		t.Error("unknown key accepted")
	}
}
