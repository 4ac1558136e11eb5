package terraform

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// A top-level required_providers block (it belongs in terraform {}) made
// terraform-config-inspect panic: discovery crashed the job, and a module
// call beside it was lost. Now the directory is still a layer, and a local
// check says which file does not parse.
func TestDiscoverSurvivesFilesTheInspectorPanicsOn(t *testing.T) {
	root := t.TempDir()
	writeFiles(t, root, map[string]string{
		"infra/main.tf":       `module "net" { source = "../modules/net" }`,
		"infra/providers.tf":  "required_providers {\n  aws = { source = \"hashicorp/aws\" }\n}\n",
		"modules/net/main.tf": `variable "cidr" {}`,
	})
	got, err := Discover(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"infra", "modules/net"}; !slices.Equal(got, want) {
		t.Errorf("Discover = %q, want %q (a layer that does not parse still is one; its calls are unknown)", got, want)
	}
	why := Unparseable(filepath.Join(root, "infra"))
	if !strings.Contains(why, filepath.Join(root, "infra", "providers.tf")) || !strings.Contains(why, "required_providers") {
		t.Errorf("Unparseable = %q, want the file and the block named", why)
	}
	if why := Unparseable(filepath.Join(root, "modules/net")); why != "" {
		t.Errorf("a module that parses: %q", why)
	}
	if !needsProviders(filepath.Join(root, "infra")) {
		t.Error("needsProviders of a layer that does not parse must say yes")
	}
}

// FuzzDiscover feeds arbitrary .tf and .tf.json files, with module calls
// between directories, to discovery: it never panics, and every directory
// holding Terraform files is a layer or called by one.
func FuzzDiscover(f *testing.F) {
	f.Add(`required_providers { aws = "1" }`, `module "m" { source = "../b" }`, false)
	f.Add(`terraform { required_providers { aws = { source = "hashicorp/aws" } } }`, `variable "x" { default = 1 }`, false)
	f.Add(`{"module": {"m": {"source": "../b"}}}`, `{"variable": {"x": {"default": [1]}}}`, true)
	f.Add(`component "c" {}`, `variable "v" { default = {a = 1} type = map(number) }`, false)
	f.Add(`resource "terraform_data" {`, `output "o" { value = 1 }`, false)
	f.Fuzz(func(t *testing.T, a, b string, json bool) {
		root := t.TempDir()
		ext := ".tf"
		if json {
			ext = ".tf.json"
		}
		for dir, src := range map[string]string{"a": a, "b": b} {
			if err := os.MkdirAll(filepath.Join(root, dir), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, dir, "main"+ext), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		got, err := Discover(root)
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range got {
			if dir != "a" && dir != "b" {
				t.Fatalf("Discover = %q: %q is no directory of the tree", got, dir)
			}
		}
		// Only a module call (its source) can take a directory off the list.
		// A file that does not parse is read again by the inspector's
		// legacy HCL 1 parser, whose keys match in any case ("sourCe").
		if !strings.Contains(strings.ToLower(a+b), "source") && !slices.Equal(got, []string{"a", "b"}) {
			t.Fatalf("Discover = %q, want both directories: nothing calls them", got)
		}
		for _, dir := range []string{"a", "b"} {
			Unparseable(filepath.Join(root, dir))
			LocalModules(root, dir)
		}
	})
}
