package terraform

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// initKeyOf is the init cache key of a layer at layer/ of a tree with these
// files.
func initKeyOf(t *testing.T, scope string, env map[string]string, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	writeFiles(t, root, files)
	s := Setup{WorkDir: filepath.Join(root, "layer"), Root: root, PluginCacheDir: "/cache", InitCacheDir: "/init-cache", InitCacheScope: scope, Env: env}
	return initKey(s, "/bin/terraform", "1.5.7")
}

// What init reads changes the key; what it does not read (resources'
// arguments, variables, other files) does not.
func TestInitKeyFollowsWhatInitReads(t *testing.T) {
	base := map[string]string{
		"layer/main.tf": `terraform {
  backend "local" {
    path = "/state/a.tfstate"
  }
  required_providers {
    world = {
      source  = "strata.test/strata/world"
      version = "0.1.0"
    }
  }
}

module "net" {
  source = "../modules/net"
}

resource "terraform_data" "x" {
  input = "a"
}
`,
		"modules/net/main.tf": `module "sub" {
  source = "./sub"
}
`,
		"modules/net/sub/main.tf": `resource "terraform_data" "y" {}
`,
	}
	with := func(name, content string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		out[name] = content
		return out
	}
	key := initKeyOf(t, "acme/infra", nil, base)
	if key == "" {
		t.Fatal("a layer of local modules is not cached")
	}
	same := map[string]map[string]string{
		"a resource's argument":          with("layer/main.tf", strings.Replace(base["layer/main.tf"], `input = "a"`, `input = "b"`, 1)),
		"a variable":                     with("layer/vars.tf", "variable \"v\" {\n  default = 1\n}\n"),
		"a file that is not Terraform's": with("layer/README.md", "hello"),
		"a nested module's resource":     with("modules/net/sub/main.tf", "resource \"terraform_data\" \"y\" {\n  input = 2\n}\n"),
	}
	for what, files := range same {
		if got := initKeyOf(t, "acme/infra", nil, files); got != key {
			t.Errorf("%s changed the key", what)
		}
	}
	differs := map[string]string{
		"the backend":                     initKeyOf(t, "acme/infra", nil, with("layer/main.tf", strings.Replace(base["layer/main.tf"], "/state/a.tfstate", "/state/b.tfstate", 1))),
		"a provider version":              initKeyOf(t, "acme/infra", nil, with("layer/main.tf", strings.Replace(base["layer/main.tf"], `"0.1.0"`, `"0.2.0"`, 1))),
		"a provider a nested module uses": initKeyOf(t, "acme/infra", nil, with("modules/net/sub/main.tf", "resource \"aws_vpc\" \"y\" {}\n")),
		"a module call":                   initKeyOf(t, "acme/infra", nil, with("layer/extra.tf", "module \"more\" {\n  source = \"../modules/net/sub\"\n}\n")),
		"the lock file":                   initKeyOf(t, "acme/infra", nil, with("layer/.terraform.lock.hcl", "# locked\n")),
		"a JSON file":                     initKeyOf(t, "acme/infra", nil, with("layer/extra.tf.json", `{"locals": {"a": 1}}`)),
		"the variables Terraform gets":    initKeyOf(t, "acme/infra", map[string]string{"AWS_REGION": "eu-west-1"}, base),
		"the repository":                  initKeyOf(t, "acme/other", nil, base),
	}
	for what, got := range differs {
		if got == key || got == "" {
			t.Errorf("%s: key %q, want another key than %q", what, got, key)
		}
	}

	for what, files := range map[string]map[string]string{
		"a registry module":            with("layer/extra.tf", "module \"vpc\" {\n  source  = \"terraform-aws-modules/vpc/aws\"\n  version = \"5.0.0\"\n}\n"),
		"a git module":                 with("modules/net/main.tf", "module \"sub\" {\n  source = \"git::https://example.com/m.git?ref=main\"\n}\n"),
		"a .terraform the tree brings": with("layer/.terraform/providers/evil", "binary"),
		"a file that does not parse":   with("layer/broken.tf", "resource {"),
	} {
		if got := initKeyOf(t, "acme/infra", nil, files); got != "" {
			t.Errorf("%s: cached under %q, want no cache", what, got)
		}
	}
}

// A second plan of a layer whose providers, modules and backend did not
// change -> init does not run again; the plan and its apply are right.
func TestSecondPlanReusesTheLayersInit(t *testing.T) {
	s := newScenario(t)
	initCache := filepath.Join(t.TempDir(), "init-cache")
	plan := func(files map[string]string) (*PlanResult, string, Setup) {
		t.Helper()
		setup := s.tree(files)
		setup.InitCacheDir, setup.InitCacheScope = initCache, "acme/infra"
		var log strings.Builder
		setup.Log = &log
		r, err := Plan(testContext(t), PlanInput{Setup: setup})
		if err != nil {
			t.Fatalf("plan: %v\n%s", err, log.String())
		}
		return r, log.String(), setup
	}
	_, log, _ := plan(map[string]string{"main.tf": threeResources})
	if !strings.Contains(log, "$ terraform init") || strings.Contains(log, "init skipped") {
		t.Fatalf("first plan did not run init:\n%s", log)
	}
	changed := map[string]string{"main.tf": strings.Replace(threeResources, `input = "y"`, `input = "y2"`, 1) + "resource \"terraform_data\" \"w\" {}\n"}
	r, log, setup := plan(changed)
	if strings.Contains(log, "$ terraform init") || !strings.Contains(log, "init skipped") {
		t.Fatalf("second plan ran init:\n%s", log)
	}
	if r.Add != 4 {
		t.Errorf("second plan: %s, want 4 to add", r.Summary())
	}
	setup.Log = testLog{t}
	if _, err := Apply(testContext(t), ApplyInput{Setup: setup, PlanFile: r.PlanFile}); err != nil {
		t.Fatalf("apply after a reused init: %v", err)
	}
	if _, err := os.Stat(s.statePath); err != nil {
		t.Errorf("no state after apply: %v", err)
	}

	// Another backend -> init runs again.
	s.statePath = filepath.Join(filepath.Dir(s.statePath), "other.tfstate")
	_, log, _ = plan(changed)
	if !strings.Contains(log, "$ terraform init") {
		t.Errorf("a new backend did not run init:\n%s", log)
	}
}
