package terraform

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A layer's local modules, followed through other modules, once each, within
// the tree, past files that do not parse.
func TestLocalModules(t *testing.T) {
	outside := t.TempDir()
	writeFiles(t, outside, map[string]string{"main.tf": `module "far" { source = "./far" }`})
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"layers/a/main.tf": `module "net" { source = "../../modules/net" }`,
		"layers/c/main.tf": `
module "app" { source = "../../modules/app" }
module "local" { source = "./sub" }
module "registry" { source = "terraform-aws-modules/vpc/aws" }
module "git" { source = "git::https://example.com/x.git" }
`,
		"layers/c/sub/main.tf":  `module "deeper" { source = "./deeper" }`,
		"layers/c/sub/deeper/x": "not terraform",
		"modules/app/main.tf":   `module "net" { source = "../net" }`,
		"modules/net/main.tf":   `module "cycle" { source = "../cycle" }`,
		"modules/cycle/main.tf": `module "net" { source = "../net" }` + "\n" + `module "self" { source = "./" }`,
		"layers/broken/main.tf": `module "net" { source = "../../modules/net" }` + "\n" + `resource "terraform_data" {`,
		"layers/escape/main.tf": `module "up" { source = "../../../elsewhere" }` + "\n" + `module "link" { source = "../../links/out" }`,
		"layers/gone/main.tf":   `module "deleted" { source = "../../modules/deleted" }`,
		"layers/none/main.tf":   `resource "terraform_data" "r" {}`,
	})
	if err := os.MkdirAll(filepath.Join(root, "links"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "links", "out")); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		dir  string
		want []string
	}{
		{"layers/a", []string{"modules/cycle", "modules/net"}},
		{"layers/c", []string{"layers/c/sub", "layers/c/sub/deeper", "modules/app", "modules/cycle", "modules/net"}},
		{"layers/broken", []string{"modules/cycle", "modules/net"}},
		{"layers/escape", nil},
		{"layers/gone", []string{"modules/deleted"}},
		{"layers/none", nil},
		{"layers/missing", nil},
	} {
		if got := LocalModules(root, tc.dir); !slices.Equal(got, tc.want) {
			t.Errorf("LocalModules(%s) = %q, want %q", tc.dir, got, tc.want)
		}
	}
}
