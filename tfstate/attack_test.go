package tfstate_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
	"strata.dev/strata/tfstate"
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
