package terraform

import (
	"slices"
	"testing"
)

func TestDiscoverFindsLayersButNotTheirModules(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"main.tf": `resource "terraform_data" "root" {}`,
		"infra/network/main.tf": `
module "vpc" {
  source = "../../modules/vpc"
}
module "subnets" {
  source = "./subnets"
}
module "registry" {
  source = "terraform-aws-modules/vpc/aws"
}
`,
		"infra/network/subnets/main.tf":                `variable "cidr" {}`,
		"modules/vpc/main.tf":                          `module "flow_logs" { source = "./flow-logs" }`,
		"modules/vpc/flow-logs/main.tf":                `variable "bucket" {}`,
		"apps/api/main.tf.json":                        `{"resource": {"terraform_data": {"api": {}}}}`,
		"apps/broken/main.tf":                          `resource "terraform_data" {`,
		"apps/README.md":                               "no terraform here",
		"infra/network/.terraform/modules/vpc/main.tf": `variable "x" {}`,
		".github/terraform/main.tf":                    `resource "terraform_data" "hidden" {}`,
		"docs/examples/not-terraform/notes.tfvars":     `x = 1`,
	})

	got, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{".", "apps/api", "apps/broken", "infra/network"}
	if !slices.Equal(got, want) {
		t.Errorf("Discover = %q, want %q", got, want)
	}
}

func TestDiscoverOfATreeWithoutTerraform(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"README.md": "hello"})
	got, err := Discover(root)
	if err != nil || len(got) != 0 {
		t.Errorf("Discover = %q, %v; want none", got, err)
	}
}

// Module calls are read by content, across trees: the same files at two
// paths (two commits' trees) give their own targets, a JSON key spelled
// with escapes is still a module call, and a file that cannot call a
// module is not parsed.
func TestDiscoverReadsModuleCallsByContent(t *testing.T) {
	call := `module "vpc" { source = "../modules/vpc" }`
	escaped := `{"\u006dodule": {"db": {"source": "../modules/db"}}}`
	for _, tree := range []string{"a", "b"} {
		root := t.TempDir()
		writeFiles(t, root, map[string]string{
			"net/main.tf":         call,
			"data/main.tf.json":   escaped,
			"modules/vpc/main.tf": `variable "cidr" {}`,
			"modules/db/main.tf":  `variable "size" {}`,
			"app/main.tf":         `resource "terraform_data" "modules" {}`,
		})
		got, err := Discover(root)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"app", "data", "net"}; !slices.Equal(got, want) {
			t.Errorf("tree %s: Discover = %q, want %q", tree, got, want)
		}
	}
}

func TestMayCallModules(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      bool
	}{
		{"main.tf", `resource "terraform_data" "x" {}`, false},
		{"main.tf", `module "x" { source = "./x" }`, true},
		{"main.tf", `# a comment about modules`, true}, // parsed, finds none
		{"main.tf.json", `{"resource": {"terraform_data": {"x": {}}}}`, false},
		{"main.tf.json", `{"module": {"x": {"source": "./x"}}}`, true},
		{"main.tf.json", `{"\u006dodule": {"x": {"source": "./x"}}}`, true},
		{"main.tf", `output "u" { value = "\u0041" }`, false}, // escapes matter in JSON only
	} {
		if got := mayCallModules([]terraformFile{{tc.name, []byte(tc.src)}}); got != tc.want {
			t.Errorf("mayCallModules(%s: %s) = %v, want %v", tc.name, tc.src, got, tc.want)
		}
	}
}
