package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A checkout without .strata.yaml is valid: its layers are what discovery
// finds, listed, with the one whose files do not parse named as such.
func TestValidateARepoWithoutStrataYAML(t *testing.T) {
	root := t.TempDir()
	for name, src := range map[string]string{
		"infra/network/main.tf": `module "vpc" { source = "../../modules/vpc" }`,
		"modules/vpc/main.tf":   `variable "cidr" {}`,
		"apps/api/main.tf":      "required_providers {\n  aws = { source = \"hashicorp/aws\" }\n}\n",
	} {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out lockedBuffer
	if err := strata(context.Background(), &out, "config", "validate", root); err != nil {
		t.Fatalf("validate: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"has no .strata.yaml", "2 found",
		"\n  apps/api (does not parse: Configuration not parseable: " + filepath.Join(root, "apps/api/main.tf") + `: unhandled block type "required_providers")`,
		"\n  infra/network\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "modules/vpc") {
		t.Errorf("a module is listed as a layer:\n%s", got)
	}
}
