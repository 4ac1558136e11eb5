package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/tooltest"
)

// tofuBin is the OpenTofu the tests use: $STRATA_TOFU_BIN, else the repo's
// bin/tofu (installed by scripts/install-tofu). Without it the test skips,
// or fails when tools are required.
func tofuBin(t *testing.T) string {
	t.Helper()
	bin := os.Getenv(terraform.TofuBinaryEnv)
	if bin == "" {
		_, file, _, _ := runtime.Caller(0)
		bin = filepath.Join(filepath.Dir(file), "..", "bin", "tofu")
	}
	abs, err := filepath.Abs(bin)
	if err == nil {
		_, err = os.Stat(abs)
	}
	if err != nil {
		tooltest.Missing(t, "tofu at "+bin+" ($"+terraform.TofuBinaryEnv+")", err)
	}
	return abs
}

// binaryVersion asks a binary its version, as an operator would.
func binaryVersion(t *testing.T, bin string) string {
	t.Helper()
	out, err := exec.Command(bin, "version", "-json").Output()
	if err != nil {
		t.Fatalf("%s version -json: %v", bin, err)
	}
	var v struct {
		Version string `json:"terraform_version"`
	}
	if err := json.Unmarshal(out, &v); err != nil || v.Version == "" {
		t.Fatalf("%s version -json = %q: %v", bin, out, err)
	}
	return v.Version
}

// The server has a Terraform and an OpenTofu; each engine, named by the
// layers in .strata.yaml, plans and applies through the real server, and a
// required_version that neither binary of the engine satisfies fails the
// plan with the versions there are.
func TestEngines(t *testing.T) {
	for _, kind := range []string{config.EngineTerraform, config.EngineTofu} {
		t.Run(kind, func(t *testing.T) { engineScenarios(t, kind) })
	}
}

func engineScenarios(t *testing.T, kind string) {
	requireTerraform(t)
	tofu := tofuBin(t)
	tf, err := filepath.Abs(apptest.TerraformBin(t))
	if err != nil {
		t.Fatal(err)
	}
	bin, name := tf, "Terraform"
	if kind == config.EngineTofu {
		bin, name = tofu, "OpenTofu"
	}
	version := binaryVersion(t, bin)
	const app = "infra/app"
	strataYAML := "version: 1\nengine: " + kind + "\nlayers:\n  - dir: " + network + "\n  - dir: " + app + "\n"
	e := startLayers(t, apptest.Options{Configure: func(c *config.Server) {
		c.TerraformBin = tf
		c.Terraform.Binaries = append(c.Terraform.Binaries, config.Binary{Path: tofu, Kind: config.EngineTofu})
	}}, map[string]int{network: 1, app: 1}, map[string]string{".strata.yaml": strataYAML})
	e.Repo.SetPermission("alice", "write")

	// PR #1 plans and applies with the layer's engine.
	pr := e.openPR("grow", "alice", map[string]string{network + "/main.tf": e.layerFile(network, 2)})
	head := pr.HeadSHA()
	e.comment(pr.Number, "alice", "/plan")
	plan := e.completed(head, networkPlan)
	if plan.Conclusion != "success" || plan.Title != "2 to add, 0 to change, 0 to destroy" ||
		!strings.Contains(plan.Summary, "with "+name+" "+version+".") {
		t.Fatalf("plan check = %s %q %q; want success with %s %s", plan.Conclusion, plan.Title, plan.Summary, name, version)
	}
	e.comment(pr.Number, "alice", "/apply")
	apply := e.completed(head, networkApply)
	if apply.Conclusion != "success" || !strings.Contains(apply.Text, "Apply complete! Resources: 2 added") ||
		!strings.Contains(apply.Summary, "with "+name+" "+version+".") {
		t.Fatalf("apply check = %s %q %q", apply.Conclusion, apply.Summary, apply.Text)
	}
	// The logs name the binary that ran and its commands as typed; a plan's
	// log is stored after its check completes, before its job ends.
	e.WaitIdle(layersWait)
	for _, run := range []struct{ kind, command string }{{"layer_plan", "plan"}, {"layer_apply", "apply"}} {
		logs := strings.Join(runLogs(t, e.Server.Store(), run.kind, "acme/infra"), "\n")
		for _, want := range []string{"[strata] " + kind + " " + version + " (" + bin + ")", "$ " + kind + " " + run.command} {
			if !strings.Contains(logs, want) {
				t.Errorf("%s log has no %q:\n%s", run.kind, want, logs)
			}
		}
	}
	// The state is the engine's own: the binary that applied wrote it.
	state, err := os.ReadFile(filepath.Join(e.state, strings.ReplaceAll(network, "/", "_"), "terraform.tfstate"))
	var written struct {
		Version string `json:"terraform_version"`
	}
	if err == nil {
		err = json.Unmarshal(state, &written)
	}
	if err != nil || written.Version != version {
		t.Errorf("state after apply (%v) written by %q, want %s", err, written.Version, version)
	}

	// PR #2 asks for a version the engine's binaries do not have.
	pr2 := e.openPR("future", "bob", map[string]string{app + "/versions.tf": "terraform {\n  required_version = \">= 99.0\"\n}\n"})
	e.Deliver(e.Repo.PullRequestEvent("opened", pr2.Number))
	cr := e.completed(pr2.HeadSHA(), "strata/plan: "+app)
	want := `required_version ">= 99.0" matches none of the ` + kind + ` binaries: ` + version + ` (` + bin + `). Add one to terraform.binaries in the server config.`
	if cr.Conclusion != "failure" || cr.Title != "No binary for this layer" || !strings.Contains(cr.Summary, want) {
		t.Fatalf("plan check = %s %q %q; want a failure saying %q", cr.Conclusion, cr.Title, cr.Summary, want)
	}
	e.commentWith(pr2.Number, "1 failed")
	noViolations(t, e.GitHub)
}

// The operator adds a newer Terraform between a plan and its /apply: the
// plan is applied by the binary that made it (Terraform refuses a plan of
// another version), while the next plan runs the newer one.
func TestEnginesApplyRunsThePlansBinary(t *testing.T) {
	requireTerraform(t)
	tf, err := filepath.Abs(apptest.TerraformBin(t))
	if err != nil {
		t.Fatal(err)
	}
	version := binaryVersion(t, tf)
	first := startLayers(t, apptest.Options{Configure: func(c *config.Server) { c.TerraformBin = tf }}, map[string]int{network: 1}, nil)
	first.Repo.SetPermission("alice", "write")
	pr := first.openPR("grow", "alice", map[string]string{network + "/main.tf": first.layerFile(network, 2)})
	head := pr.HeadSHA()
	first.comment(pr.Number, "alice", "/plan")
	if plan := first.completed(head, networkPlan); plan.Conclusion != "success" {
		t.Fatalf("plan = %s %q", plan.Conclusion, plan.Summary)
	}
	first.WaitIdle(layersWait)
	first.Stop()

	// A "newer" terraform that can only say its version.
	newer := filepath.Join(t.TempDir(), "terraform-99")
	script := "#!/bin/sh\nif [ \"$1\" = version ]; then echo '{\"terraform_version\":\"99.0.0\",\"platform\":\"linux_amd64\"}'; exit 0; fi\n" +
		"echo 'this binary only says its version' >&2\nexit 1\n"
	if err := os.WriteFile(newer, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	again := first.another(t, apptest.Options{GitHub: first.GitHub, DatabaseURL: first.Config.DatabaseURL, DataDir: first.Config.DataDir,
		Configure: func(c *config.Server) {
			c.TerraformBin = tf
			c.Terraform.Binaries = []config.Binary{{Path: newer, Kind: config.EngineTerraform}}
		}})
	again.comment(pr.Number, "alice", "/apply")
	apply := again.completed(head, networkApply)
	if apply.Conclusion != "success" || !strings.Contains(apply.Summary, "with Terraform "+version+".") {
		t.Fatalf("apply check = %s %q %q; want success with Terraform %s", apply.Conclusion, apply.Summary, apply.Text, version)
	}

	// A new plan runs the highest version: here, the one that cannot plan.
	again.comment(pr.Number, "alice", "/plan")
	again.WaitFor(layersWait, func() bool {
		plans := again.checksNamed(head, networkPlan)
		if len(plans) < 2 {
			return false
		}
		last := plans[len(plans)-1]
		return last.Status == "completed" && last.Conclusion == "failure" && strings.Contains(last.Summary, "this binary only says its version")
	})
	noViolations(t, again.GitHub)
}
