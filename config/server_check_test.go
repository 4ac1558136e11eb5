package config

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func rsaPEM(t *testing.T) string {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}))
}

// What serve would refuse as it starts, LoadServer refuses first, naming
// the setting and what is wrong with it.
func TestServerConfigRefusedAtLoad(t *testing.T) {
	good := rsaPEM(t)
	ec, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ec)
	ecPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
	keyFile := filepath.Join(t.TempDir(), "app.pem")
	if err := os.WriteFile(keyFile, []byte("-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	app := map[string]string{"STRATA_GITHUB_APP_ID": "1", "STRATA_GITHUB_WEBHOOK_SECRET": "s3cret-value"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range app {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	for _, tc := range []struct {
		name string
		yaml string
		env  map[string]string
		want string // "" accepts
	}{
		{"a PKCS#1 RSA key", "", with("STRATA_GITHUB_PRIVATE_KEY", good), ""},
		{"not PEM", "", with("STRATA_GITHUB_PRIVATE_KEY", "ghp_notakey"), "STRATA_GITHUB_PRIVATE_KEY: not a PEM private key"},
		{"an EC key", "", with("STRATA_GITHUB_PRIVATE_KEY", ecPEM), "GitHub Apps sign with RSA keys"},
		{"a corrupt key file", "", with("STRATA_GITHUB_PRIVATE_KEY_FILE", keyFile), "STRATA_GITHUB_PRIVATE_KEY_FILE " + keyFile + `: the PEM block "RSA PRIVATE KEY" is not an RSA private key`},
		{"a missing key file", "", with("STRATA_GITHUB_PRIVATE_KEY_FILE", keyFile+".gone"), "STRATA_GITHUB_PRIVATE_KEY_FILE: open " + keyFile + ".gone"},
		{"a redact pattern that does not compile", "redact: ['secret-(']", nil, "redact: redact pattern \"secret-(\": error parsing regexp"},
		{"a redact pattern matching nothing at all", "redact: ['x*']", nil, `redact pattern "x*" matches empty text`},
		{"a database URL of no known kind", "database_url: mysql://db/strata", nil, `STRATA_DATABASE_URL: scheme "mysql"`},
		{"an address without a port", "addr: localhost", nil, `STRATA_ADDR "localhost"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "strata.yaml")
			if err := os.WriteFile(file, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := LoadServer(file, envOf(tc.env))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("LoadServer = %v, want an error with %q", err, tc.want)
			}
		})
	}
}

// Credentials the setup page stored are checked like configured ones.
func TestStoredCredentialsWithABadKeyAreRefused(t *testing.T) {
	dir := t.TempDir()
	if err := SaveCredentials(dir, &Credentials{AppID: 9, PrivateKey: "truncated", WebhookSecret: "s3cret-value"}); err != nil {
		t.Fatal(err)
	}
	cfg, err := LoadServer("", envOf(map[string]string{"STRATA_DATA_DIR": dir}))
	if err != nil {
		t.Fatal(err)
	}
	err = cfg.UseStoredCredentials()
	if err == nil || !strings.Contains(err.Error(), "github-app.json: private key: not a PEM private key") {
		t.Fatalf("UseStoredCredentials = %v", err)
	}
	if cfg.Configured() {
		t.Fatal("a refused key configured the App")
	}
	if err := SaveCredentials(dir, &Credentials{AppID: 9, PrivateKey: rsaPEM(t), WebhookSecret: "s3cret-value"}); err != nil {
		t.Fatal(err)
	}
	if err := cfg.UseStoredCredentials(); err != nil || cfg.GitHub.AppID != 9 {
		t.Fatalf("good credentials: %v, app %d", err, cfg.GitHub.AppID)
	}
}

func TestUnpassedVarsAreThoseNotListed(t *testing.T) {
	tf := Terraform{Env: []string{"TF_VAR_region", "AWS_REGION"}}
	got := tf.UnpassedVars([]string{"TF_VAR_region=eu", "TF_VAR_token=x", "AWS_SECRET_ACCESS_KEY=y", "TF_VAR_a=", "PATH=/bin"})
	if strings.Join(got, ",") != "TF_VAR_a,TF_VAR_token" {
		t.Fatalf("UnpassedVars = %q", got)
	}
}
