package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestServerConfigEnvironmentWins(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "strata.yaml")
	os.WriteFile(file, []byte("addr: \":9000\"\nworkers: 2\ngithub:\n  api_url: https://ghe.example/api/v3\n  max_wait: 5m\n"), 0o600)
	cfg, err := LoadServer(file, envOf(map[string]string{"STRATA_WORKERS": "8", "STRATA_SOURCE_MAX_BYTES": "1048576", "STRATA_GITHUB_MAX_WAIT": "2m"}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Addr != ":9000" || cfg.Workers != 8 {
		t.Fatalf("addr %q workers %d, want :9000 from the file and 8 from the environment", cfg.Addr, cfg.Workers)
	}
	if cfg.GitHub.MaxWait != 2*time.Minute {
		t.Fatalf("STRATA_GITHUB_MAX_WAIT gave %v, want 2m over the file's 5m", cfg.GitHub.MaxWait)
	}
	if cfg.SourceMaxBytes != 1<<20 {
		t.Fatalf("STRATA_SOURCE_MAX_BYTES gave %d, want 1048576", cfg.SourceMaxBytes)
	}
	if cfg.GitHub.APIURL != "https://ghe.example/api/v3/" || cfg.GitHub.GraphQLURL != "https://ghe.example/api/graphql" {
		t.Fatalf("GitHub Enterprise URLs: api %q graphql %q", cfg.GitHub.APIURL, cfg.GitHub.GraphQLURL)
	}
	if cfg.DatabaseURL != "sqlite://strata.db" || cfg.DataDir != "./.strata" {
		t.Fatalf("defaults: database %q data dir %q", cfg.DatabaseURL, cfg.DataDir)
	}
	if def, err := LoadServer("", envOf(nil)); err != nil || def.GitHub.MaxWait != 15*time.Minute {
		t.Fatalf("default GitHub max wait = %v (%v), want 15m", def.GitHub.MaxWait, err)
	}
}

func TestServerConfigRefusesUnknownKeysAndMissingSecret(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "strata.yaml")
	os.WriteFile(file, []byte("adress: \":9000\"\n"), 0o600)
	if _, err := LoadServer(file, envOf(nil)); err == nil || !strings.Contains(err.Error(), "adress") {
		t.Fatalf("unknown key: err = %v, want it named", err)
	}
	_, err := LoadServer("", envOf(map[string]string{"STRATA_GITHUB_APP_ID": "12", "STRATA_GITHUB_PRIVATE_KEY": "pem"}))
	if err == nil || !strings.Contains(err.Error(), "STRATA_GITHUB_WEBHOOK_SECRET") {
		t.Fatalf("missing webhook secret: err = %v", err)
	}
	if _, err := LoadServer("", envOf(map[string]string{"STRATA_WORKERS": "many"})); err == nil {
		t.Fatal("STRATA_WORKERS=many accepted")
	}
	if _, err := LoadServer("", envOf(map[string]string{"STRATA_GITHUB_MAX_WAIT": "15"})); err == nil || !strings.Contains(err.Error(), "STRATA_GITHUB_MAX_WAIT") {
		t.Fatalf("STRATA_GITHUB_MAX_WAIT=15: err = %v, want it named", err)
	}
}

func TestCredentialsAreStoredOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	in := &Credentials{AppID: 7, Slug: "strata", PrivateKey: "-----BEGIN RSA PRIVATE KEY-----", WebhookSecret: "s3cret-value"}
	if err := SaveCredentials(dir, in); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, CredentialsFile))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file mode %v, want 0600", fi.Mode().Perm())
	}
	out, err := LoadCredentials(dir)
	if err != nil || out.AppID != 7 || out.WebhookSecret != "s3cret-value" {
		t.Fatalf("loaded %+v, %v", out, err)
	}
	var s Server
	s.UseCredentials(out)
	if !s.Configured() || s.GitHub.WebhookSecret != "s3cret-value" {
		t.Fatal("stored credentials did not configure the server")
	}
}

// The App's OAuth client is a pair: half of it is a mistake, said at start.
func TestServerConfigOAuthClientGoesTogether(t *testing.T) {
	if _, err := LoadServer("", envOf(map[string]string{"STRATA_GITHUB_CLIENT_ID": "Iv1.abc"})); err == nil ||
		!strings.Contains(err.Error(), "STRATA_GITHUB_CLIENT_SECRET") {
		t.Errorf("a client id without its secret: %v", err)
	}
	cfg, err := LoadServer("", envOf(map[string]string{"STRATA_GITHUB_CLIENT_ID": "Iv1.abc", "STRATA_GITHUB_CLIENT_SECRET": "s3cret"}))
	if err != nil || cfg.GitHub.ClientID != "Iv1.abc" || cfg.GitHub.ClientSecret != "s3cret" {
		t.Errorf("the pair: %+v, %v", cfg.GitHub, err)
	}
}
