package tfstate_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/engine/terraform/testprovider"
	"strata.dev/strata/engine/terraform/testprovider/providertest"
	"strata.dev/strata/redact"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
	"strata.dev/strata/tfstate"
	"strata.dev/strata/tooltest"
)

// probeLayer is a layer whose apply runs, from a local-exec provisioner
// (PR code at apply time, with the run's credential in its environment),
// curl against each URL with that credential, writing one status a line
// (%%{ escapes HCL's template directive).
func probeLayer(out string, method string, urls ...string) string {
	var cmds []string
	for _, u := range urls {
		cmds = append(cmds, `curl -s -o /dev/null -w '%%{http_code}\n' -X `+method+` -u "$TF_HTTP_USERNAME:$TF_HTTP_PASSWORD" `+
			`-d '{"version":4,"serial":99,"lineage":"x","resources":[]}' '`+u+`' >> `+out)
	}
	return "resource \"terraform_data\" \"probe\" {\n  provisioner \"local-exec\" {\n    command = <<-EOT\n" +
		strings.Join(cmds, "\n") + "\nEOT\n  }\n}\n"
}

// A PR's provisioner, running at apply with the apply's write credential,
// reaches its own state (the positive control) and nobody else's: another
// layer's, another workspace's, another repository's state are refused.
func TestAttackProvisionerReachesOnlyItsOwnState(t *testing.T) {
	bin := engineBin(t, terraform.KindTerraform, "STRATA_TERRAFORM_BIN")
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("curl: %v", err)
	}
	ctx := context.Background()
	st := storetest.Open(t, store.SQLite)
	base := backendServer(t, st)
	own := store.StateKey{Repo: "acme/infra", Layer: "net"}
	// Others' states exist, with secrets in them.
	for _, k := range []store.StateKey{{Repo: "acme/infra", Layer: "db"}, {Repo: "acme/infra", Layer: "net", Workspace: "prod"}, {Repo: "acme/other", Layer: "net"}} {
		if _, err := st.PutState(ctx, k, []byte(`{"version":4,"serial":1,"lineage":"L","resources":[],"outputs":{"secret":{"value":"hunter2","type":"string"}}}`), store.StateVersion{}, false, 0); err != nil {
			t.Fatal(err)
		}
	}
	runID := liveRun(t, st, 1, own.Repo, own.Layer)
	cred, err := tfstate.Issue(ctx, st, base, own, runID, store.StateWrite)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "codes")
	targets := []string{
		tfstate.Address(base, own), // positive control: its own state (204: none written yet)
		tfstate.Address(base, store.StateKey{Repo: "acme/infra", Layer: "db"}),
		tfstate.Address(base, store.StateKey{Repo: "acme/infra", Layer: "net", Workspace: "prod"}),
		tfstate.Address(base, store.StateKey{Repo: "acme/other", Layer: "net"}),
	}
	work := filepath.Join(dir, "layer")
	os.MkdirAll(work, 0o755)
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(probeLayer(out, "GET", targets...)), 0o644); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	setup := terraform.Setup{WorkDir: work, TerraformBin: bin, Log: &log,
		State: &terraform.HTTPState{Address: cred.Address, Username: cred.Username, Password: cred.Password}}
	res, err := terraform.Plan(ctx, terraform.PlanInput{Setup: setup})
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, log.String())
	}
	// The apply runs in a fresh copy, as on the server.
	os.RemoveAll(filepath.Join(work, ".terraform"))
	if _, err := terraform.Apply(ctx, terraform.ApplyInput{Setup: setup, PlanFile: res.PlanFile}); err != nil {
		t.Fatalf("apply: %v\n%s", err, log.String())
	}
	codes, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Fields(string(codes)), []string{"204", "403", "403", "403"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("the provisioner got %v for own, another layer, another workspace, another repository; want %v", got, want)
	}
	if strings.Contains(log.String(), cred.Password) {
		t.Error("the run's log holds the credential")
	}
}

// The credential plan-time code finds in its environment is a plan's: it
// reads and locks its own state, and cannot write it; once the run has
// ended, it opens nothing.
func TestAttackPlanCredentialCannotWriteNorOutliveItsRun(t *testing.T) {
	ctx := context.Background()
	st := storetest.Open(t, store.SQLite)
	base := backendServer(t, st)
	key := store.StateKey{Repo: "acme/infra", Layer: "net"}
	runID := liveRun(t, st, 1, key.Repo, key.Layer)
	cred, err := tfstate.Issue(ctx, st, base, key, runID, store.StateRead)
	if err != nil {
		t.Fatal(err)
	}
	do := func(method, body string) int {
		req, _ := http.NewRequest(method, cred.Address, strings.NewReader(body))
		req.SetBasicAuth(cred.Username, cred.Password)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	state := `{"version":4,"serial":1,"lineage":"L","resources":[]}`
	if got := do("GET", ""); got != http.StatusNoContent {
		t.Errorf("plan reads its (empty) state: %d, want 204", got)
	}
	if got := do("LOCK", `{"ID":"l1"}`); got != http.StatusOK {
		t.Errorf("plan locks its state: %d, want 200", got)
	}
	if got := do("POST", state); got != http.StatusForbidden {
		t.Errorf("plan writes its state: %d, want 403", got)
	}
	if got := do("UNLOCK", `{"ID":"l1"}`); got != http.StatusOK {
		t.Errorf("plan unlocks its state: %d, want 200", got)
	}
	if c, _, _ := st.CurrentState(ctx, key); c != nil {
		t.Fatalf("the plan's credential wrote the state: %s", c)
	}
	// The run ends (its slot released, its credential revoked).
	st.ReleaseSlot(ctx, key.Repo, key.Layer, runID)
	if got := do("GET", ""); got != http.StatusForbidden {
		t.Errorf("after the run released its slot: %d, want 403", got)
	}
	tfstate.Revoke(ctx, st, runID)
	if got := do("GET", ""); got != http.StatusUnauthorized {
		t.Errorf("after the run ended: %d, want 401", got)
	}
}

// planAttacker builds the PR's plan-time program (testdata/planattacker)
// into the layer, as a PR ships it, executable.
func planAttacker(t *testing.T, layerDir string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", filepath.Join(layerDir, "planattacker"), "strata.dev/strata/tfstate/testdata/planattacker")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of the plan-time attacker: %v\n%s", err, out)
	}
}

// planTimeLayer is a layer whose plan runs the PR's program from a data
// source (world_exec, as hashicorp/external would) and shows what it
// printed as an output: what the attacker reads from its plan's comment.
var planTimeLayer = fmt.Sprintf(`terraform {
  required_providers {
    world = {
      source  = %q
      version = %q
    }
  }
}

data "world_exec" "attack" {
  program = ["./planattacker"]
}

output "attack" {
  value = data.world_exec.attack.stdout
}

# The credential printed where a plan shows it: an output.
data "world_exec" "leak" {
  program = ["sh", "-c", "printf 'leaked=%%s' \"$TF_HTTP_PASSWORD\""]
}

output "leak" {
  value = data.world_exec.leak.stdout
}
`, providertest.Source, testprovider.Version)

// A PR's code that runs while Terraform plans, with the plan's credential
// in its environment (inherited from Terraform through the provider), reads
// its own state (the positive control: it had the credential and reached
// the backend) and can do nothing else: its write of its own state, past
// Terraform's own lock whose ID it took from a 423, is refused, and so are
// reads and writes of another layer's, another workspace's and another
// repository's states. The store is as it was. A program that prints the
// credential (into an output) finds it masked wherever the result's
// Sensitive masks: the run's log, the check and the comment. With the server's sandbox
// and with `terraform.sandbox: off`: the backend refuses, whatever confines
// Terraform.
func TestAttackPlanTimeCodeCannotWriteNorReachOthers(t *testing.T) {
	provider := providertest.Install(t)
	for _, e := range engines {
		for _, sb := range []struct {
			name     string
			settings sandbox.Settings
		}{{"sandbox", sandbox.Settings{}}, {"sandbox off", sandbox.Settings{Mode: sandbox.Off}}} {
			t.Run(string(e.kind)+"/"+sb.name, func(t *testing.T) {
				planTimeAttack(t, engineBin(t, e.kind, e.env), e.kind, provider, sb.settings)
			})
		}
	}
}

func planTimeAttack(t *testing.T, bin string, kind terraform.Kind, provider providertest.Installed, settings sandbox.Settings) {
	if err := sandbox.Detect(settings).Err(); err != nil {
		tooltest.Missing(t, "the sandbox (Landlock)", err)
	}
	ctx := context.Background()
	st := storetest.Open(t, store.SQLite)
	base := backendServer(t, st)
	own := store.StateKey{Repo: "acme/infra", Layer: "net"}
	others := []store.StateKey{{Repo: "acme/infra", Layer: "db"}, {Repo: "acme/infra", Layer: "net", Workspace: "prod"}, {Repo: "acme/other", Layer: "net"}}
	states := map[store.StateKey][]byte{
		own: []byte(`{"version":4,"terraform_version":"1.5.7","serial":3,"lineage":"L","outputs":{},"resources":[],"check_results":null}`),
	}
	for _, k := range others {
		states[k] = []byte(`{"version":4,"serial":1,"lineage":"L","resources":[],"outputs":{"secret":{"value":"hunter2","type":"string"}}}`)
	}
	for k, s := range states {
		if _, err := st.PutState(ctx, k, s, store.StateVersion{}, false, 0); err != nil {
			t.Fatal(err)
		}
	}
	runID := liveRun(t, st, 1, own.Repo, own.Layer)
	cred, err := tfstate.Issue(ctx, st, base, own, runID, store.StateRead)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	work := filepath.Join(root, "layer")
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "main.tf"), []byte(planTimeLayer), 0o644); err != nil {
		t.Fatal(err)
	}
	planAttacker(t, work)
	var log bytes.Buffer
	setup := terraform.Setup{WorkDir: work, Root: root, TerraformBin: bin, Kind: kind, CLIConfigFile: provider.CLIConfig, Log: &log,
		Sandbox: &terraform.Sandbox{Settings: settings},
		State:   &terraform.HTTPState{Address: cred.Address, Username: cred.Username, Password: cred.Password}}
	res, err := terraform.Plan(ctx, terraform.PlanInput{Setup: setup})
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, log.String())
	}
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`([a-z]+-[a-z]+)=(\d{3}|error)`).FindAllStringSubmatch(res.Text, -1) {
		got[m[1]] = m[2]
	}
	want := map[string]string{
		"own-get": "200", "own-post": "403",
		"layer-get": "403", "layer-post": "403",
		"workspace-get": "403", "workspace-post": "403",
		"repo-get": "403", "repo-post": "403",
	}
	t.Logf("the plan-time program reported %v", got)
	for name, code := range want {
		if got[name] != code {
			t.Errorf("plan-time code: %s = %q, want %s", name, got[name], code)
		}
	}
	if t.Failed() {
		t.Logf("the plan:\n%s", res.Text)
	}
	for k, s := range states {
		content, _, err := st.CurrentState(ctx, k)
		if err != nil || !bytes.Equal(content, s) {
			t.Errorf("the state of %s is now %s (%v), was %s", k, content, err, s)
		}
		if list, _ := st.StateVersions(ctx, k, 0); len(list) != 1 {
			t.Errorf("the state of %s has %d versions, had 1", k, len(list))
		}
	}
	// The program printed the credential into an output: the plan shows
	// it, and the result names it sensitive, so that what masks the log,
	// the check and the comment with the result's Sensitive (as the server
	// does) masks it too.
	if !strings.Contains(res.Text, "leaked="+cred.Password) {
		t.Fatalf("the plan does not show the printed credential: the leak was not tried\n%s", res.Text)
	}
	if !slices.Contains(res.Sensitive, cred.Password) {
		t.Errorf("the plan's Sensitive does not hold its state credential")
	}
	masked, _ := redact.New(nil)
	masked.Add(res.Sensitive...)
	for what, text := range map[string]string{"the run's log": log.String(), "the plan's text": res.Text} {
		if strings.Contains(masked.String(text), cred.Password) {
			t.Errorf("%s, masked with the plan's Sensitive, holds the credential", what)
		}
	}
}
