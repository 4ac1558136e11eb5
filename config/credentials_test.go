package config

import (
	"path/filepath"
	"testing"
)

// The public URL the operator chose during setup is stored with the App's
// credentials and used after a restart, unless a configured one wins.
func TestStoredCredentialsKeepThePublicURL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	if err := SaveCredentials(dir, &Credentials{AppID: 7, PrivateKey: "pem", WebhookSecret: "s3cret-value", PublicURL: "https://strata.example.com"}); err != nil {
		t.Fatal(err)
	}
	creds, err := LoadCredentials(dir)
	if err != nil {
		t.Fatal(err)
	}
	var restarted Server
	restarted.UseCredentials(creds)
	if restarted.PublicURL != "https://strata.example.com" {
		t.Errorf("PublicURL = %q, want the one chosen during setup", restarted.PublicURL)
	}
	configured := Server{PublicURL: "https://strata.internal.example"}
	configured.UseCredentials(creds)
	if configured.PublicURL != "https://strata.internal.example" {
		t.Errorf("PublicURL = %q, want STRATA_PUBLIC_URL's", configured.PublicURL)
	}
}
