package layers

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
)

// A tree with shared and nested modules: modules/net is called by layers a
// and b, and through modules/app by layer c; layer d calls modules/net too but
// watches only its own globs; layer e's autoplan is off.
var (
	modA = moduleLayer("a", "infra/a", true)
	modB = moduleLayer("b", "infra/b", true)
	modC = moduleLayer("c", "infra/c", true)
	modD = config.Layer{Name: "d", Dir: "infra/d", Autoplan: config.Autoplan{Enabled: true, WhenModified: []string{"*.tf", "../../shared/*.tf"}}}
	modE = moduleLayer("e", "infra/e", false)

	moduleTree = map[string]string{
		"infra/a/main.tf":        `module "net" { source = "../../modules/net" }`,
		"infra/b/main.tf":        `module "net" { source = "../../modules/net" }`,
		"infra/c/main.tf":        `module "app" { source = "../../modules/app" }`,
		"infra/d/main.tf":        `module "net" { source = "../../modules/net" }`,
		"infra/e/main.tf":        `module "app" { source = "../../modules/app" }`,
		"modules/net/main.tf":    `resource "terraform_data" "net" {}`,
		"modules/net/nat/x.tf":   `resource "terraform_data" "nat" {}`,
		"modules/app/main.tf":    `module "net" { source = "../net" }`,
		"modules/unused/main.tf": `resource "terraform_data" "unused" {}`,
	}
	moduleLayers = []config.Layer{modA, modB, modC, modD, modE}
)

func moduleLayer(name, dir string, autoplan bool) config.Layer {
	return config.Layer{Name: name, Dir: dir, Autoplan: config.Autoplan{Enabled: autoplan, WhenModified: config.DefaultWhenModified}}
}

// modulesOf reads the tree's modules as readLayerModules does.
func modulesOf(t *testing.T, layers []config.Layer) layerModules {
	t.Helper()
	root := t.TempDir()
	for name, content := range moduleTree {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := layerModules{}
	for _, l := range layers {
		m[l.Name] = terraform.LocalModules(root, l.Dir)
	}
	return m
}

// A changed module plans the layers calling it, directly or through another
// module, when they keep the default when_modified.
func TestTouchedLayersThroughModules(t *testing.T) {
	modules := modulesOf(t, moduleLayers)
	for _, tc := range []struct {
		name     string
		files    []string
		autoplan []string
		plan     []string
	}{
		{name: "shared module", files: []string{"modules/net/main.tf"}, autoplan: []string{"a", "b", "c"}, plan: []string{"a", "b", "c", "e"}},
		{name: "nested module", files: []string{"modules/app/main.tf"}, autoplan: []string{"c"}, plan: []string{"c", "e"}},
		{name: "tfvars and tf.json count", files: []string{"modules/app/x.tfvars", "modules/app/y.tf.json"}, autoplan: []string{"c"}, plan: []string{"c", "e"}},
		{name: "not a Terraform file", files: []string{"modules/net/README.md"}},
		{name: "below the module's dir", files: []string{"modules/net/nat/x.tf"}},
		{name: "module nobody calls", files: []string{"modules/unused/main.tf"}},
		{name: "custom globs keep their own", files: []string{"shared/x.tf"}, autoplan: []string{"d"}, plan: []string{"d"}},
		{name: "own dir and a module", files: []string{"infra/a/main.tf", "modules/app/main.tf"}, autoplan: []string{"a", "c"}, plan: []string{"a", "c", "e"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(touchedLayers(moduleLayers, tc.files, modules, true)); !slices.Equal(got, tc.autoplan) {
				t.Errorf("autoplan = %v, want %v", got, tc.autoplan)
			}
			got, _ := planTargets(moduleLayers, nil, tc.files, modules)
			if !slices.Equal(names(got), tc.plan) {
				t.Errorf("/plan = %v, want %v", names(got), tc.plan)
			}
		})
	}
}

// The tree is read only for layers a module could touch, and only when some
// Terraform file is in no module-following layer's own dir.
func TestModuleCandidates(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    []string
		autoplan bool
		want     []string
	}{
		{name: "module file", files: []string{"modules/net/main.tf"}, autoplan: true, want: []string{"a", "b", "c"}},
		{name: "/plan reads autoplan-off layers", files: []string{"modules/net/main.tf"}, want: []string{"a", "b", "c", "e"}},
		{name: "touched layers need no modules", files: []string{"infra/a/main.tf", "modules/net/main.tf"}, autoplan: true, want: []string{"b", "c"}},
		{name: "only layers' own files", files: []string{"infra/a/main.tf", "infra/b/vars.tfvars"}, autoplan: true},
		{name: "no Terraform file", files: []string{"README.md", "modules/net/notes.txt"}, autoplan: true},
		{name: "no files", autoplan: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(moduleCandidates(moduleLayers, tc.files, tc.autoplan)); !slices.Equal(got, tc.want) {
				t.Errorf("candidates = %v, want %v", got, tc.want)
			}
		})
	}
}
