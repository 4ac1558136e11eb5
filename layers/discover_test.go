package layers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"strata.dev/strata/engine/terraform"
)

// A PR adds Terraform files in directories whose paths would forge text in
// check names and comments (a backtick, a newline, a mention, spaces) or
// read as a workspace (`@`) -> discovery makes no layer of them, and says
// why in words that name the fix.
func TestDiscoveredLayerNamesAreValidated(t *testing.T) {
	root := t.TempDir()
	dirs := []string{
		".", "infra/network", "infra/net-1.2_b",
		"infra/evil`name", "infra/two words", "infra/line\nbreak", "infra/net@prod", "infra/ping @everyone", "infra/$(id)",
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, d, "main.tf"), []byte("resource \"terraform_data\" \"x\" {}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	found, err := terraform.Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(found) != len(dirs) {
		t.Fatalf("Discover found %q, want every directory", found)
	}
	got := layerNames(DiscoveredLayers(found))
	if want := []string{".", "infra/net-1.2_b", "infra/network"}; !slices.Equal(got, want) {
		t.Fatalf("layers = %q, want %q", got, want)
	}
	for _, d := range dirs[3:] {
		err := discoveredNameProblem(d)
		if err == nil || !strings.Contains(err.Error(), ".strata.yaml") {
			t.Errorf("%q: %v, want a refusal that names .strata.yaml", d, err)
		}
	}
}
