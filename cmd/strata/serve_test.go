package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// lockedBuffer takes the server's log while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// strata runs the real command line in this process, as `strata ARGS...`.
// Commands keep their flags and context between runs in one process:
// --config and the context are reset.
func strata(ctx context.Context, out io.Writer, args ...string) error {
	var reset func(c *cobra.Command)
	reset = func(c *cobra.Command) {
		c.SetContext(ctx)
		if f := c.Flags().Lookup("config"); f != nil {
			f.Value.Set(f.DefValue)
		}
		for _, sub := range c.Commands() {
			reset(sub)
		}
	}
	reset(root)
	root.SetArgs(args)
	root.SetOut(out)
	root.SetErr(out)
	return root.ExecuteContext(ctx)
}

// serveEnv is a server with no config file: only what the test sets.
func serveEnv(t *testing.T, kv ...string) {
	t.Setenv("STRATA_ADDR", "127.0.0.1:0")
	t.Setenv("STRATA_METRICS_ADDR", "127.0.0.1:0")
	t.Setenv("STRATA_STATE_ADDR", "127.0.0.1:0")
	t.Setenv("STRATA_DATA_DIR", t.TempDir())
	for i := 0; i < len(kv); i += 2 {
		t.Setenv(kv[i], kv[i+1])
	}
}

// A server that could not authenticate to GitHub, or would leak what an
// operator asked to mask, stops at start with the reason, and `strata
// config validate` refuses the same config with the same reason. Before,
// an invalid key was a warning and the server reported ready.
func TestServeRefusesWhatItCannotRunWith(t *testing.T) {
	dir := t.TempDir()
	badKey := filepath.Join(dir, "app.pem")
	if err := os.WriteFile(badKey, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "gone.pem")
	redactCfg := filepath.Join(dir, "strata.yaml")
	if err := os.WriteFile(redactCfg, []byte("redact: ['token-[a-z']\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	app := []string{"STRATA_GITHUB_APP_ID", "12", "STRATA_GITHUB_WEBHOOK_SECRET", "s3cret-value"}
	for _, tc := range []struct {
		name   string
		env    []string
		config string
		want   string
	}{
		{"invalid inline key", append(app, "STRATA_GITHUB_PRIVATE_KEY", "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----"),
			"", `STRATA_GITHUB_PRIVATE_KEY: the PEM block "RSA PRIVATE KEY" is not an RSA private key`},
		{"invalid key file", append(app, "STRATA_GITHUB_PRIVATE_KEY_FILE", badKey), "", "STRATA_GITHUB_PRIVATE_KEY_FILE " + badKey + ": not a PEM private key"},
		{"unreadable key file", append(app, "STRATA_GITHUB_PRIVATE_KEY_FILE", unreadable), "", "STRATA_GITHUB_PRIVATE_KEY_FILE: open " + unreadable + ": no such file"},
		{"bad redact pattern, even in setup mode", nil, redactCfg, `redact: redact pattern "token-[a-z": error parsing regexp: missing closing ]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serveEnv(t, tc.env...)
			var configArgs []string
			if tc.config != "" {
				configArgs = []string{"--config", tc.config}
			}
			// A server that starts despite the input would serve until the
			// deadline, and the test would fail on its nil error.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var out lockedBuffer
			err := strata(ctx, &out, append([]string{"serve"}, configArgs...)...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("serve = %v, want refused with %q\n%s", err, tc.want, out.String())
			}
			if strings.Contains(out.String(), "Strata is serving") {
				t.Fatalf("serve reported serving:\n%s", out.String())
			}
			verr := strata(ctx, &out, append([]string{"config", "validate"}, configArgs...)...)
			if verr == nil || verr.Error() != err.Error() {
				t.Fatalf("config validate = %v, want serve's refusal %v", verr, err)
			}
		})
	}
}

// Credentials stored by the setup page are checked as configured ones: a
// damaged file stops serve and fails validate.
func TestServeRefusesStoredCredentialsWithABadKey(t *testing.T) {
	serveEnv(t)
	data := os.Getenv("STRATA_DATA_DIR")
	if err := os.WriteFile(filepath.Join(data, "github-app.json"), []byte(`{"app_id": 3, "private_key": "", "webhook_secret": "s3cret-value"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var out lockedBuffer
	want := "github-app.json: private key: not a PEM private key"
	if err := strata(ctx, &out, "serve"); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("serve = %v, want %q", err, want)
	}
	if err := strata(ctx, &out, "config", "validate"); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("config validate = %v, want %q", err, want)
	}
}

// In setup mode the server is serving (the setup page), so it is ready;
// a TF_VAR_* of its environment that no run will get is named once, with
// how to pass it.
func TestServeInSetupModeIsReadyAndNamesUnpassedVars(t *testing.T) {
	serveEnv(t, "TF_VAR_db_password", "hunter2-long", "TF_VAR_region", "eu-west-1", "STRATA_TERRAFORM_ENV", "TF_VAR_region")
	ctx, cancel := context.WithCancel(context.Background())
	var out lockedBuffer
	done := make(chan error, 1)
	go func() { done <- strata(ctx, &out, "serve") }()
	setupURL := regexp.MustCompile(`Open (http://127\.0\.0\.1:\d+)/setup\?token=`)
	var base string
	deadline := time.Now().Add(20 * time.Second)
	for base == "" {
		if m := setupURL.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("no setup URL logged:\n%s", out.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	for path, want := range map[string]int{"/readyz": http.StatusOK, "/healthz": http.StatusOK} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s in setup mode = %d, want %d", path, res.StatusCode, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	log := out.String()
	if n := strings.Count(log, "not passed to Terraform"); n != 1 {
		t.Fatalf("the unpassed variables are logged %d times, want once:\n%s", n, log)
	}
	if !strings.Contains(log, `"TF_VAR_db_password"`) || !strings.Contains(log, "terraform.env (STRATA_TERRAFORM_ENV)") {
		t.Errorf("the warning does not name the variable and how to pass it:\n%s", log)
	}
	if strings.Contains(log, `"TF_VAR_region"`) {
		t.Errorf("the warning names a variable terraform.env passes:\n%s", log)
	}
	if strings.Contains(log, "hunter2") {
		t.Errorf("the warning shows a value:\n%s", log)
	}
}
