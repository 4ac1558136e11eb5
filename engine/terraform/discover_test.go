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
