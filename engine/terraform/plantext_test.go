package terraform

import (
	"slices"
	"testing"
)

// The check is written from the plan's text before `show -json` runs; the
// store and the comment from the JSON. Both must say the same thing: each
// case plans a change against applied state, and the text's reading is
// compared with the JSON's.
func TestPlanTextSaysWhatTheJSONSays(t *testing.T) {
	before := `
resource "terraform_data" "server" {
  triggers_replace = "v1"
}

resource "terraform_data" "old" {}

resource "terraform_data" "config" {
  input = "blue"
}

resource "terraform_data" "keyed" {
  for_each = toset(["a will be created", "b"])
  input    = each.key
}

module "net" {
  source = "./net"
  cidr   = "10.0.0.0/16"
}

resource "terraform_data" "moving" {
  input = "m"
}

resource "terraform_data" "trigger" {
  input = "t1"
}

resource "terraform_data" "follower" {
  lifecycle {
    replace_triggered_by = [terraform_data.trigger]
  }
}

output "kept" {
  value = "same"
}

output "gone" {
  value = "bye"
}

output "changing" {
  value = "one"
}
`
	module := `
variable "cidr" {
  type = string
}

resource "terraform_data" "vpc" {
  input = var.cidr
}
`
	after := `
variable "password" {
  type      = string
  sensitive = true
  default   = "s3cret-value"
}

resource "terraform_data" "server" {
  triggers_replace = "v2"
}

resource "terraform_data" "config" {
  input = "green"
}

resource "terraform_data" "keyed" {
  for_each = toset(["a will be created", "c"])
  input    = "${each.key}!"
}

resource "terraform_data" "fresh" {
  count = 2
}

module "net" {
  source = "./net"
  cidr   = "10.1.0.0/16"
}

moved {
  from = terraform_data.moving
  to   = terraform_data.moved
}

resource "terraform_data" "moved" {
  input = "m2"
}

resource "terraform_data" "trigger" {
  input = "t2"
}

resource "terraform_data" "follower" {
  lifecycle {
    replace_triggered_by = [terraform_data.trigger]
  }
}

output "kept" {
  value = "same"
}

output "changing" {
  value = "two"
}

output "added" {
  value = ["a", "b"]
}

output "secret" {
  value     = var.password
  sensitive = true
}
`
	s := newScenario(t)
	first := map[string]string{"main.tf": before, "net/main.tf": module}
	s.apply(first, s.plan(first))

	for name, files := range map[string]map[string]string{
		"many actions": {"main.tf": after, "net/main.tf": module},
		"no changes":   first,
	} {
		t.Run(name, func(t *testing.T) {
			r := s.plan(files)
			text := summarizeText(r.Text, r.HasChanges)
			if name == "many actions" && (len(r.Replaced) == 0 || len(r.Destroyed) == 0 || len(r.Outputs) == 0 || r.Change == 0) {
				t.Fatalf("the case does not cover every action: %+v", r)
			}
			for _, c := range []struct {
				what      string
				text, got any
			}{
				{"counts", [4]int{text.Import, text.Add, text.Change, text.Destroy}, [4]int{r.Import, r.Add, r.Change, r.Destroy}},
				{"summary", text.Summary(), r.Summary()},
				{"markdown summary", text.MarkdownSummary(), r.MarkdownSummary()},
			} {
				if c.text != c.got {
					t.Errorf("%s from the text = %v, from the JSON = %v", c.what, c.text, c.got)
				}
			}
			for _, c := range []struct {
				what      string
				text, got []string
			}{
				{"replaced", text.Replaced, r.Replaced},
				{"destroyed", text.Destroyed, r.Destroyed},
				{"changed", text.Changed, r.Changed},
			} {
				if !slices.Equal(c.text, c.got) {
					t.Errorf("%s from the text = %q, from the JSON = %q", c.what, c.text, c.got)
				}
			}
			if !slices.Equal(text.Outputs, r.Outputs) {
				t.Errorf("outputs from the text = %+v, from the JSON = %+v", text.Outputs, r.Outputs)
			}
		})
	}
}

// Text that only looks like a plan's -> nothing is read from the notes on
// changes made outside Terraform, which use the same "#" headers, or from
// lines that are not action headers.
func TestPlanTextReadsOnlyTheActions(t *testing.T) {
	text := `Note: Objects have changed outside of Terraform

Terraform detected the following changes made outside of Terraform since the
last "terraform apply" which may have affected this plan:

  # terraform_data.gone has been deleted
  # terraform_data.x will be destroyed
  - resource "terraform_data" "gone" {}

Terraform will perform the following actions:

  # terraform_data.a["x"] (deposed object 0c1d2e3f) will be destroyed
  # terraform_data.b will be read during apply
  # (config refers to values not yet known)
  # terraform_data.c has moved to terraform_data.d
  # terraform_data.e will be updated in-place
  # (moved from terraform_data.f)

Plan: 1 to import, 0 to add, 1 to change, 1 to destroy.

Changes to Outputs:
  + added   = {
      + nested = "  ~ x = 1"
    }
  ~ changed = 1 -> 2
  - secret  = (sensitive value)
`
	r := summarizeText(text, true)
	if want := []string{`terraform_data.a["x"]`, "terraform_data.e"}; !slices.Equal(r.Changed, want) {
		t.Errorf("Changed = %q, want %q", r.Changed, want)
	}
	if want := []string{`terraform_data.a["x"]`}; !slices.Equal(r.Destroyed, want) {
		t.Errorf("Destroyed = %q, want %q", r.Destroyed, want)
	}
	if r.Import != 1 || r.Add != 0 || r.Change != 1 || r.Destroy != 1 {
		t.Errorf("counts = %d/%d/%d/%d", r.Import, r.Add, r.Change, r.Destroy)
	}
	want := []OutputChange{{Name: "added", Action: "add"}, {Name: "changed", Action: "change"}, {Name: "secret", Action: "destroy", Sensitive: true}}
	if !slices.Equal(r.Outputs, want) {
		t.Errorf("Outputs = %+v, want %+v", r.Outputs, want)
	}
}

// The values a sensitive variable may take come from its default, every
// variable file Terraform reads, and TF_VAR_ variables -> all are masked in
// the check written before the JSON; values of other variables are not.
func TestSensitiveInputsAreReadWithoutTerraform(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"main.tf": `
variable "pw" {
  type      = string
  sensitive = true
  default   = "from-default"
}

variable "keys" {
  type      = map(list(string))
  sensitive = true
}

variable "region" {
  type    = string
  default = "not-secret-default"
}
`,
		"terraform.tfvars":        "pw = \"from-terraform-tfvars\"\nregion = \"not-secret-tfvars\"\n",
		"extra.auto.tfvars.json":  `{"keys": {"a": ["from-auto-json"]}, "region": "not-secret-json"}`,
		"prod/secrets.tfvars":     "keys = { b = [\"from-var-file\"] }\n",
		"ignored.tfvars":          "pw = \"from-a-file-not-read\"\n",
		"broken.auto.tfvars":      "pw = ",
		"nested/terraform.tfvars": "pw = \"from-another-dir\"\n",
	})
	got := sensitiveInputs(dir, []string{"prod/secrets.tfvars"}, map[string]string{"TF_VAR_pw": "from-env", "TF_VAR_region": "not-secret-env"})
	want := []string{"from-terraform-tfvars", "from-var-file", "from-auto-json", "from-default", "from-env"}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("sensitiveInputs = %q, want %q", got, want)
	}
}
