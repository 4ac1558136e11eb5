package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/seal"
	"strata.dev/strata/store"
)

// leakyLayer marks a value sensitive and prints it anyway, through
// nonsensitive() in an output: the plan and the apply both show it. The
// value holds a quote, a backslash and a non-ASCII letter, which Terraform
// and JSON escape; its tail, "value-42", shows a leak in any form.
const leakyLayer = `variable "pw" {
  type      = string
  sensitive = true
  default   = "s3cr\"et\\é-value-42"
}

output "leak" {
  value = nonsensitive(var.pw)
}
`

const leakTail = "value-42"

// /plan then /apply of a layer that prints its sensitive value -> the value
// is masked everywhere: the plan and apply checks, the comments, the run
// logs, and the plan report stored for the batch comment; and the plans
// table holds the plan sealed, not Terraform's zip.
func TestLayersSensitiveValuesMaskedAtRestAndInApplyOutput(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("leak", "alice", map[string]string{network + "/leak.tf": leakyLayer})
	head := pr.HeadSHA()

	e.comment(pr.Number, "alice", "/plan")
	if plan := e.completed(head, networkPlan); plan.Conclusion != "success" {
		t.Fatalf("plan = %+v", plan)
	}
	raw := storedPlans(t, e.Server.Store())
	if len(raw) != 1 || bytes.HasPrefix(raw[0], []byte("PK")) || bytes.Contains(raw[0], []byte(leakTail)) || !seal.IsSealed(raw[0]) {
		t.Fatalf("plans at rest = %q, want one sealed plan", raw)
	}

	e.comment(pr.Number, "alice", "/apply")
	apply := e.completed(head, networkApply)
	if apply.Conclusion != "success" || !strings.Contains(apply.Text, "Apply complete!") || !strings.Contains(apply.Text, "leak = ") {
		t.Fatalf("apply = %s %q %q", apply.Conclusion, apply.Title, apply.Text)
	}
	e.commentWith(pr.Number, "Terraform apply")
	e.WaitIdle(layersWait)
	noLeak(t, e, head, pr.Number)
	noViolations(t, e.GitHub)
}

// noLeak fails when the secret's tail is in any check, comment, run log or
// stored plan report.
func noLeak(t *testing.T, e *layersEnv, head string, pr int) {
	t.Helper()
	var texts []string
	for _, cr := range e.Repo.CheckRuns(head) {
		texts = append(texts, cr.Title, cr.Summary, cr.Text)
	}
	for _, c := range e.Repo.Comments(pr) {
		texts = append(texts, c.Body)
	}
	for _, kind := range []string{"layer_plan", "layer_apply"} {
		texts = append(texts, runLogs(t, e.Server.Store(), kind, "")...)
	}
	texts = append(texts, batchReports(t, e.Server.Store())...)
	for _, text := range texts {
		if strings.Contains(text, leakTail) {
			t.Errorf("the sensitive value leaked: %q", text)
		}
	}
}

func storedPlans(t *testing.T, st *store.Store) [][]byte {
	t.Helper()
	rows, err := st.DB().Query(`SELECT plan FROM plans`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var b []byte
		if err := rows.Scan(&b); err != nil {
			t.Fatal(err)
		}
		out = append(out, b)
	}
	return out
}

func batchReports(t *testing.T, st *store.Store) []string {
	t.Helper()
	rows, err := st.DB().Query(`SELECT report FROM plan_batch_items`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	return out
}

func newKey(t *testing.T) string {
	t.Helper()
	k := make([]byte, seal.KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return base64.StdEncoding.EncodeToString(k)
}

// A plan saved under key A; the operator rotates to key B -> a server with
// B and A as an old key applies it; a server with B only refuses it with the
// key's id and what to do, and applies nothing.
func TestLayersPlanKeyRotation(t *testing.T) {
	oldKey, newKey := newKey(t), newKey(t)
	withKeys := func(current string, old ...string) func(*config.Server) {
		return func(c *config.Server) { c.EncryptionKey, c.EncryptionKeys = current, old }
	}
	first := startLayers(t, apptest.Options{Configure: withKeys(oldKey)}, map[string]int{network: 1, "infra/dns": 1}, nil)
	first.Repo.SetPermission("alice", "write")
	one := first.openPR("one", "alice", map[string]string{network + "/main.tf": first.layerFile(network, 2)})
	two := first.openPR("two", "alice", map[string]string{"infra/dns/main.tf": first.layerFile("infra/dns", 2)})
	first.comment(one.Number, "alice", "/plan "+network)
	first.completed(one.HeadSHA(), networkPlan)
	first.comment(two.Number, "alice", "/plan infra/dns")
	first.completed(two.HeadSHA(), "strata/plan: infra/dns")
	first.WaitIdle(layersWait)
	first.Stop()

	restart := func(configure func(*config.Server)) *layersEnv {
		return first.another(t, apptest.Options{GitHub: first.GitHub, DatabaseURL: first.Config.DatabaseURL,
			DataDir: first.Config.DataDir, Configure: configure})
	}

	rotated := restart(withKeys(newKey, oldKey))
	rotated.comment(one.Number, "alice", "/apply")
	if apply := rotated.completed(one.HeadSHA(), networkApply); apply.Conclusion != "success" {
		t.Fatalf("apply of a plan sealed with the old key = %s %q %q", apply.Conclusion, apply.Title, apply.Summary)
	}
	rotated.WaitIdle(layersWait)
	rotated.Stop()

	dropped := restart(withKeys(newKey))
	dropped.comment(two.Number, "alice", "/apply")
	apply := dropped.completed(two.HeadSHA(), "strata/apply: infra/dns")
	if apply.Conclusion != "failure" || !strings.Contains(apply.Summary, seal.KeyID(mustKey(t, oldKey))) ||
		!strings.Contains(apply.Summary, "STRATA_ENCRYPTION_KEYS") || !strings.Contains(apply.Summary, "/plan") {
		t.Fatalf("apply without the old key = %s %q %q", apply.Conclusion, apply.Title, apply.Summary)
	}

	// Someone who can write the database puts a plan in clear in its place:
	// it is not trusted.
	st := dropped.Server.Store()
	if _, err := st.DB().Exec(st.Rebind(`UPDATE plans SET plan = ? WHERE layer = ?`), []byte("PK\x03\x04"), "infra/dns"); err != nil {
		t.Fatal(err)
	}
	dropped.comment(two.Number, "alice", "/apply")
	dropped.WaitFor(layersWait, func() bool {
		n := 0
		for _, cr := range dropped.checksNamed(two.HeadSHA(), "strata/apply: infra/dns") {
			if cr.Status == "completed" && strings.Contains(cr.Summary, "plan is stale, run /plan") {
				n++
			}
		}
		return n == 1
	})
	noViolations(t, first.GitHub)
}

func mustKey(t *testing.T, b64 string) []byte {
	t.Helper()
	k, err := seal.ParseKey("test key", b64)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A PR adds Terraform files in directories named to forge text (a
// backtick, a mention, spaces, an `@`) in a repo without .strata.yaml ->
// autoplan plans the real layer it touches and makes no check of the others.
func TestLayersDiscoveredNamesAreValidated(t *testing.T) {
	e := startLayers(t, apptest.Options{}, map[string]int{network: 1}, nil)
	files := map[string]string{network + "/main.tf": e.layerFile(network, 2)}
	for _, dir := range []string{"infra/pwn` @everyone", "infra/net@prod"} {
		files[dir+"/main.tf"] = "resource \"terraform_data\" \"x\" {}\n"
	}
	pr := e.openPR("forge", "alice", files)
	e.Deliver(e.Repo.PullRequestEvent("opened", pr.Number))
	if plan := e.completed(pr.HeadSHA(), networkPlan); plan.Conclusion != "success" {
		t.Fatalf("plan of the real layer = %+v", plan)
	}
	e.WaitIdle(layersWait)
	for _, cr := range e.Repo.CheckRuns(pr.HeadSHA()) {
		if strings.Contains(cr.Name, "pwn") || strings.Contains(cr.Name, "@") {
			t.Errorf("check named after an invalid directory: %q", cr.Name)
		}
	}
	for _, c := range e.Repo.Comments(pr.Number) {
		if strings.Contains(c.Body, "@everyone") {
			t.Errorf("comment names an invalid directory: %q", c.Body)
		}
	}
	noViolations(t, e.GitHub)
}
