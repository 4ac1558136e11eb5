package terraform

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

const threeResources = `
resource "terraform_data" "x" {
  input = "x"
}

resource "terraform_data" "y" {
  input = "y"
}

resource "terraform_data" "z" {
  input = terraform_data.x.output
}
`

func TestPlanOfANewLayerCreatesItsResources(t *testing.T) {
	s := newScenario(t)
	r := s.plan(map[string]string{"main.tf": threeResources})

	if r.Add != 3 || r.Change != 0 || r.Destroy != 0 || r.Import != 0 {
		t.Errorf("counts = %d/%d/%d/%d, want 3 to add", r.Add, r.Change, r.Destroy, r.Import)
	}
	if got := r.Summary(); got != "3 to add, 0 to change, 0 to destroy" {
		t.Errorf("Summary() = %q", got)
	}
	want := []string{"terraform_data.x", "terraform_data.y", "terraform_data.z"}
	if !slices.Equal(r.Changed, want) {
		t.Errorf("Changed = %v, want %v", r.Changed, want)
	}
	if !r.HasChanges || len(r.Replaced)+len(r.Destroyed) != 0 {
		t.Errorf("HasChanges = %v, Replaced = %v, Destroyed = %v", r.HasChanges, r.Replaced, r.Destroyed)
	}
	if !strings.Contains(r.Text, "terraform_data.x will be created") {
		t.Errorf("Text lacks the creation of terraform_data.x:\n%s", r.Text)
	}
	if strings.Contains(r.Text, "\x1b[") {
		t.Errorf("Text has colour codes")
	}
	if len(r.PlanFile) == 0 {
		t.Error("no plan file")
	}
	if r.TerraformVersion == "" {
		t.Error("no Terraform version")
	}
}

func TestSensitiveValuesNeverReachTheText(t *testing.T) {
	const secret = "hunter2-correct-horse"
	s := newScenario(t)
	r := s.plan(map[string]string{
		"main.tf": `
variable "password" {
  type      = string
  sensitive = true
}

resource "terraform_data" "db" {
  input = { user = "admin", password = var.password }
}

output "password" {
  value     = var.password
  sensitive = true
}
`,
		"prod.tfvars": `password = "` + secret + `"` + "\n",
	}, "prod.tfvars")

	if !strings.Contains(r.Text, "(sensitive value)") {
		t.Errorf("Text does not mask the password:\n%s", r.Text)
	}
	comment := PlanComment{Layers: []LayerReport{{Layer: "db", Result: r}}}.Markdown()
	for name, shown := range map[string]string{"Text": r.Text, "Summary": r.Summary(), "MarkdownSummary": r.MarkdownSummary(), "Comment": comment} {
		if strings.Contains(shown, secret) {
			t.Errorf("%s shows the secret", name)
		}
	}
	if !slices.Contains(r.Sensitive, secret) {
		t.Errorf("Sensitive = %q, want it to hold the password", r.Sensitive)
	}
	if slices.Contains(r.Sensitive, "admin") {
		t.Errorf("Sensitive = %q holds a value that is not sensitive", r.Sensitive)
	}
	if len(r.Outputs) != 1 || r.Outputs[0] != (OutputChange{Name: "password", Action: "add", Sensitive: true}) {
		t.Errorf("Outputs = %+v", r.Outputs)
	}
}

func TestAppliedPlanLeavesNothingToChange(t *testing.T) {
	s := newScenario(t)
	files := map[string]string{"main.tf": threeResources}
	planned := s.plan(files)

	applied := s.apply(files, planned)
	if !strings.Contains(applied.Text, "Apply complete! Resources: 3 added, 0 changed, 0 destroyed.") {
		t.Errorf("apply output:\n%s", applied.Text)
	}

	again := s.plan(files)
	if again.HasChanges || len(again.Changed) != 0 || again.Summary() != "No changes" {
		t.Errorf("after apply: HasChanges = %v, Changed = %v, Summary = %q", again.HasChanges, again.Changed, again.Summary())
	}
}

func TestReplacementsAndDestroysAreCalledOut(t *testing.T) {
	s := newScenario(t)
	before := map[string]string{"main.tf": `
resource "terraform_data" "server" {
  triggers_replace = "v1"
}

resource "terraform_data" "old" {}

resource "terraform_data" "config" {
  input = "blue"
}
`}
	s.apply(before, s.plan(before))

	r := s.plan(map[string]string{"main.tf": `
resource "terraform_data" "server" {
  triggers_replace = "v2"
}

resource "terraform_data" "config" {
  input = "green"
}
`})
	if got := r.Summary(); got != "1 to add, 1 to change, 2 to destroy" {
		t.Errorf("Summary() = %q", got)
	}
	if !slices.Equal(r.Replaced, []string{"terraform_data.server"}) || !slices.Equal(r.Destroyed, []string{"terraform_data.old"}) {
		t.Errorf("Replaced = %v, Destroyed = %v", r.Replaced, r.Destroyed)
	}
	md := r.MarkdownSummary()
	for _, want := range []string{"⚠️ **1 to replace**", "`terraform_data.server`", "⚠️ **1 to destroy**: `terraform_data.old`", "- `terraform_data.config`"} {
		if !strings.Contains(md, want) {
			t.Errorf("MarkdownSummary lacks %q:\n%s", want, md)
		}
	}
	comment := PlanComment{Layers: []LayerReport{{Layer: "app", Result: r}}}.Markdown()
	for _, want := range []string{"<summary>⚠️ <b>app</b>: Plan: 1 to add, 1 to change, 2 to destroy</summary>", "```diff\n", "\n-/+ resource \"terraform_data\" \"server\"", "\n!   resource \"terraform_data\" \"config\""} {
		if !strings.Contains(comment, want) {
			t.Errorf("comment lacks %q:\n%s", want, comment)
		}
	}
}

func TestUnsatisfiedRequiredVersionFailsWithTerraformsMessage(t *testing.T) {
	s := newScenario(t)
	_, err := Plan(testContext(t), PlanInput{Setup: s.tree(map[string]string{"main.tf": `
terraform {
  required_version = ">= 9.0"
}
`})})
	tfError(t, err, "init", "Unsupported Terraform Core version")
}

func TestSyntaxErrorFailsWithTerraformsMessage(t *testing.T) {
	s := newScenario(t)
	_, err := Plan(testContext(t), PlanInput{Setup: s.tree(map[string]string{"main.tf": `
resource "terraform_data" "x" {
  input = 
`})})
	var tfErr *Error
	if !errors.As(err, &tfErr) || !strings.Contains(tfErr.Message, "main.tf") || !strings.Contains(tfErr.Message, "Error:") {
		t.Fatalf("want an *Error naming main.tf, got %v", err)
	}
}

func TestInvalidReferenceFailsThePlan(t *testing.T) {
	s := newScenario(t)
	_, err := Plan(testContext(t), PlanInput{Setup: s.tree(map[string]string{"main.tf": `
resource "terraform_data" "x" {
  input = terraform_data.missing.output
}
`})})
	tfError(t, err, "plan", "Reference to undeclared resource")
}

func TestWorkspacesKeepTheirOwnState(t *testing.T) {
	s := newScenario(t)
	files := map[string]string{"main.tf": threeResources}
	staging := func() Setup {
		setup := s.tree(files)
		setup.Workspace = "staging"
		return setup
	}
	ctx := testContext(t)

	first, err := Plan(ctx, PlanInput{Setup: staging()})
	if err != nil {
		t.Fatalf("plan in a new workspace: %v", err)
	}
	if _, err := Apply(ctx, ApplyInput{Setup: staging(), PlanFile: first.PlanFile}); err != nil {
		t.Fatalf("apply in staging: %v", err)
	}
	again, err := Plan(ctx, PlanInput{Setup: staging()})
	if err != nil {
		t.Fatalf("plan in an existing workspace: %v", err)
	}
	if again.HasChanges {
		t.Errorf("staging after apply: %s", again.Summary())
	}
	if def := s.plan(files); def.Add != 3 {
		t.Errorf("default workspace: %s, want 3 to add", def.Summary())
	}
}

func TestStalePlanIsRefusedByTerraform(t *testing.T) {
	s := newScenario(t)
	files := map[string]string{"main.tf": threeResources}
	first := s.plan(files)
	second := s.plan(files)
	s.apply(files, first)

	_, err := Apply(testContext(t), ApplyInput{Setup: s.tree(files), PlanFile: second.PlanFile})
	tfError(t, err, "apply", "Saved plan is stale")
}

func TestParallelPlansShareOnePluginCache(t *testing.T) {
	a, b := newScenario(t), newScenario(t)
	b.cacheDir = a.cacheDir
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range []*scenario{a, b} {
		setup := s.tree(map[string]string{"main.tf": threeResources})
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = Plan(context.Background(), PlanInput{Setup: setup})
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("plan %d: %v", i, err)
		}
	}
	// These layers only use the built-in provider: their inits install
	// nothing and did not wait for each other on the cache lock.
	if _, err := os.Stat(filepath.Join(a.cacheDir, cacheLockName)); !os.IsNotExist(err) {
		t.Errorf("built-in-only layers took the cache lock (stat: %v)", err)
	}
}

// The plan's JSON is kept only when KeepJSON, asked once Terraform saved
// the plan, says so: a layer no policy set judges keeps none.
func TestPlanKeepsItsJSONOnlyWhenAsked(t *testing.T) {
	tests := []struct {
		name          string
		keep          func() int64
		wantJSON      bool
		wantTooLarge  bool
		wantAskedOnce bool
	}{
		{name: "no KeepJSON: no set judges the layer", keep: nil},
		{name: "KeepJSON says 0", keep: func() int64 { return 0 }, wantAskedOnce: true},
		{name: "KeepJSON says less than 0", keep: func() int64 { return -1 }, wantAskedOnce: true},
		{name: "a set judges the layer", keep: func() int64 { return 32 << 20 }, wantJSON: true, wantAskedOnce: true},
		{name: "the JSON weighs more than KeepJSON says", keep: func() int64 { return 16 }, wantTooLarge: true, wantAskedOnce: true},
	}
	s := newScenario(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var planned, asked int
			in := PlanInput{Setup: s.tree(map[string]string{"main.tf": threeResources}),
				Planned: func(*PlanResult) error { planned++; return nil }}
			if tt.keep != nil {
				in.KeepJSON = func() int64 {
					if planned != 1 {
						t.Errorf("KeepJSON asked before the plan was made (Planned called %d times)", planned)
					}
					asked++
					return tt.keep()
				}
			}
			r, err := Plan(testContext(t), in)
			if err != nil {
				t.Fatalf("plan: %v", err)
			}
			if (asked == 1) != tt.wantAskedOnce || asked > 1 {
				t.Errorf("KeepJSON asked %d times", asked)
			}
			if got := r.JSON != nil; got != tt.wantJSON {
				t.Errorf("JSON kept = %v, want %v (%d bytes)", got, tt.wantJSON, len(r.JSON))
			}
			if tt.wantJSON && (!json.Valid(r.JSON) || !strings.Contains(string(r.JSON), `"address":"terraform_data.x"`)) {
				t.Errorf("JSON is not the plan's: %.200s", r.JSON)
			}
			if r.JSONTooLarge != tt.wantTooLarge {
				t.Errorf("JSONTooLarge = %v, want %v", r.JSONTooLarge, tt.wantTooLarge)
			}
			// The rest of the result is read from the JSON all the same.
			if r.Add != 3 || len(r.Changed) != 3 {
				t.Errorf("Add = %d, Changed = %v, want the 3 resources", r.Add, r.Changed)
			}
		})
	}
}
