package e2e

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"strata.dev/strata/apptest"
	"strata.dev/strata/config"
	"strata.dev/strata/store"
)

// The attack of the security issue, played against a real `strata serve`
// process: a PR adds layers that read the server's secrets and print them
// base64-encoded (so that redaction cannot see them), and comments /plan.
// Each read is refused by the sandbox, the layer that looks for a TF_VAR_
// of the server's environment gets its default, and nothing of the
// server's reaches GitHub (checks, comments) or the run logs.
func TestPlanCannotReadTheServersSecrets(t *testing.T) {
	e := newCrashEnv(t)
	e.db = "sqlite://" + filepath.Join(e.dataDir, "strata.db") // in the data dir, where the server keeps it
	canary, tfVarCanary := "canary-"+randomHex(t), "tfvar-canary-"+randomHex(t)
	t.Setenv("CANARY_SECRET", canary) // a secret of the server's environment (not STRATA_*: serve refuses unknown ones)
	t.Setenv("TF_VAR_canary", tfVarCanary)
	keyFile := filepath.Join(t.TempDir(), "app-key.pem")
	key := e.gh.PrivateKeyPEM()
	if err := os.WriteFile(keyFile, key, 0o600); err != nil {
		t.Fatal(err)
	}
	// The key file the operator names (startProcess also gives the server
	// the key inline, in its environment: both are targets).
	t.Setenv("STRATA_GITHUB_PRIVATE_KEY_FILE", keyFile)
	t.Setenv("STRATA_PUBLIC_URL", "https://strata.example.test")
	// A line of the key's body: it is in the key file and, inline, in the
	// server's environment.
	keyLine := strings.Split(string(key), "\n")[1]
	secrets := []string{canary, tfVarCanary, keyLine, apptest.WebhookSecret}

	srv := e.start()
	reads := map[string]string{
		"attack/own-env":    `base64encode(file("/proc/self/environ"))`,
		"attack/server-env": `base64encode(file("/proc/` + strconv.Itoa(srv.cmd.Process.Pid) + `/environ"))`,
		"attack/key":        `base64encode(file(` + strconv.Quote(keyFile) + `))`,
		"attack/database":   `filebase64(` + strconv.Quote(strings.TrimPrefix(e.db, "sqlite://")) + `)`,
	}
	files := map[string]string{
		"attack/tf-var/main.tf": "variable \"canary\" {\n  default = \"not-passed\"\n}\n\noutput \"canary\" {\n  value = var.canary\n}\n",
	}
	for dir, expr := range reads {
		files[dir+"/main.tf"] = "output \"stolen\" {\n  value = " + expr + "\n}\n"
	}
	e.repo.Commit("attack", files, "Read the server's secrets")
	e.repo.SetPermission("alice", "write")
	pr := e.repo.OpenPR("attack", "main", "alice")
	head := pr.HeadSHA()
	srv.deliver(e.repo.IssueCommentEvent(pr.Number, "alice", "/plan"))

	for dir := range reads {
		cr := e.waitCheck(head, "strata/plan: "+dir, completedCheck)
		if cr.Conclusion != "failure" || !strings.Contains(cr.Summary, "permission") {
			t.Errorf("%s: plan %s %q, want it failed, the read refused:\n%s", dir, cr.Conclusion, cr.Title, cr.Summary)
		}
	}
	if cr := e.waitCheck(head, "strata/plan: attack/tf-var", completedCheck); cr.Conclusion != "success" ||
		!strings.Contains(cr.Summary+cr.Text, `"not-passed"`) {
		t.Errorf("attack/tf-var: plan %s, want success with the variable's default:\n%s\n%s", cr.Conclusion, cr.Summary, cr.Text)
	}
	waitComment(t, e.gh, e.repo, pr.Number, "Terraform plan")
	e.waitIdle()

	// Everything GitHub received, and every run's log, in the store and as
	// the server serves it.
	outputs := map[string]string{}
	for _, cr := range e.repo.AllCheckRuns() {
		outputs["check "+cr.Name] = cr.Title + "\n" + cr.Summary + "\n" + cr.Text
		if path, ok := strings.CutPrefix(cr.DetailsURL, "https://strata.example.test/runs/"); ok {
			outputs["log of "+cr.Name] = get(t, "http://"+srv.addr+"/runs/"+path)
		}
	}
	for _, c := range e.repo.Comments(pr.Number) {
		outputs["comment "+strconv.FormatInt(c.ID, 10)] = c.Body
	}
	st, err := store.Open(context.Background(), e.db, e.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, log := range runLogs(t, st, "layer_plan", "") {
		outputs["stored log of plan run "+strconv.Itoa(i+1)] = log
	}
	for where, out := range outputs {
		for _, leaked := range leaks(out, secrets) {
			t.Errorf("%s carries the server's secret %q", where, leaked)
		}
	}
	noViolations(t, e.gh)

	// The server says how Terraform runs, with what keeps each protection:
	// at start-up and on /readyz.
	if ready := get(t, "http://"+srv.addr+"/readyz"); !strings.Contains(ready, "sandbox: on (landlock ABI") ||
		!strings.Contains(ready, "no process outliving the run") {
		t.Errorf("/readyz = %q, want the sandbox named", ready)
	}
	if !strings.Contains(srv.logText(), `"sandbox":"on (landlock ABI`) || !strings.Contains(srv.logText(), `no signal to Strata`) {
		t.Errorf("the start-up log does not name the sandbox:\n%s", srv.logText())
	}
}

// `strata version` says whether Terraform runs sandboxed on this host, with
// the table of what keeps each protection, and that it does not when the
// server config turns the sandbox off.
func TestVersionSaysHowTerraformRuns(t *testing.T) {
	requireTerraform(t)
	for _, tc := range []struct{ setting, want string }{
		{"", "sandbox: on (landlock ABI "},
		{"best_effort", "sandbox: best_effort (landlock ABI "},
		{"off", "sandbox: off (server config)"},
	} {
		cmd := exec.Command(binary(t), "version")
		cmd.Env = append(os.Environ(), "STRATA_TERRAFORM_SANDBOX="+tc.setting)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), tc.want) || !strings.Contains(string(out), "no read of Strata's secrets") {
			t.Errorf("STRATA_TERRAFORM_SANDBOX=%q: strata version = %q (%v), want %q", tc.setting, out, err, tc.want)
		}
	}
}

// The server config gives one layer a variable -> its plan uses it, and
// the repo's other layer keeps the default: values reach a layer only
// through the server config, by repo and layer.
func TestServerConfigGivesALayerItsVariables(t *testing.T) {
	e := startLayers(t, apptest.Options{Configure: func(c *config.Server) {
		c.Terraform.Layers = []config.TerraformLayer{{Repo: "acme/infra", Layer: network,
			Env: map[string]string{"TF_VAR_greeting": "from-the-server-config"}}}
	}}, map[string]int{network: 1, "infra/app": 1}, nil)
	greeting := "variable \"greeting\" {\n  default = \"the-default\"\n}\n\noutput \"greeting\" {\n  value = var.greeting\n}\n"
	e.Repo.SetPermission("alice", "write")
	pr := e.openPR("greet", "alice", map[string]string{network + "/greeting.tf": greeting, "infra/app/greeting.tf": greeting})
	e.comment(pr.Number, "alice", "/plan")
	for layer, want := range map[string]string{network: "from-the-server-config", "infra/app": "the-default"} {
		if cr := e.completed(pr.HeadSHA(), "strata/plan: "+layer); cr.Conclusion != "success" || !strings.Contains(cr.Summary+cr.Text, `"`+want+`"`) {
			t.Errorf("%s: plan %s, want greeting %q:\n%s\n%s", layer, cr.Conclusion, want, cr.Summary, cr.Text)
		}
	}
	noViolations(t, e.GitHub)
}

// base64Run is a run of base64 long enough to carry a secret.
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/]{16,}`)

// leaks returns the secrets that text carries, plain or base64-encoded (as
// base64encode prints a file: from its first byte, so aligned).
func leaks(text string, secrets []string) []string {
	blobs := []string{text}
	for _, run := range base64Run.FindAllString(text, -1) {
		if b, err := base64.RawStdEncoding.DecodeString(run[:len(run)/4*4]); err == nil {
			blobs = append(blobs, string(b))
		}
	}
	var found []string
	for _, s := range secrets {
		for _, b := range blobs {
			if strings.Contains(b, s) {
				found = append(found, s)
				break
			}
		}
	}
	return found
}

func randomHex(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// The detector finds a secret inside an encoded environment, as the
// attack would print it, and in plain text; it finds nothing in a refusal.
func TestLeaksFindsEncodedSecrets(t *testing.T) {
	environ := base64.StdEncoding.EncodeToString([]byte("PATH=/bin\x00STRATA_CANARY_SECRET=canary-1\x00HOME=/root\x00"))
	for _, tc := range []struct {
		text string
		want int
	}{
		{`+ stolen = "` + environ + `"`, 1},
		{"the key is canary-1, plainly", 1},
		{"open /proc/self/environ: permission denied", 0},
	} {
		if got := leaks(tc.text, []string{"canary-1"}); len(got) != tc.want {
			t.Errorf("leaks(%q) = %v, want %d", tc.text, got, tc.want)
		}
	}
}

// logText is what the process logged so far (the server logs to stderr).
func (p *process) logText() string {
	w := p.cmd.Stderr.(*syncWriter)
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
