package config

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"path/filepath"
	"strings"

	"strata.dev/strata/redact"
)

// startProblems are what `strata serve` would otherwise find only later,
// as it starts or, worse, at the first webhook: a key GitHub cannot verify
// tokens with, a redact pattern that does not compile, an address or
// database URL the server cannot use. validate reports them, so serve and
// `strata config validate` refuse the same configs.
func (s *Server) startProblems() []string {
	var out []string
	if _, _, err := net.SplitHostPort(s.Addr); err != nil {
		out = append(out, fmt.Sprintf("STRATA_ADDR %q: %v; want HOST:PORT or :PORT", s.Addr, err))
	}
	switch {
	case strings.HasPrefix(s.DatabaseURL, "sqlite:"), strings.HasPrefix(s.DatabaseURL, "postgres://"), strings.HasPrefix(s.DatabaseURL, "postgresql://"):
	default:
		scheme, _, _ := strings.Cut(s.DatabaseURL, ":")
		out = append(out, fmt.Sprintf("STRATA_DATABASE_URL: scheme %q; want sqlite://PATH or postgres://...", scheme))
	}
	if _, err := redact.New(s.Redact); err != nil {
		out = append(out, fmt.Sprintf("redact: %v", err))
	}
	out = append(out, CheckPolicySets(s.Policies)...)
	if s.GitHub.PrivateKey != "" {
		if err := CheckPrivateKey(s.GitHub.PrivateKey); err != nil {
			out = append(out, fmt.Sprintf("%s: %v", s.keySource(), err))
		}
	}
	return out
}

// keySource names where the private key came from, for messages.
func (s *Server) keySource() string {
	if s.GitHub.PrivateKeyFile != "" {
		return "STRATA_GITHUB_PRIVATE_KEY_FILE " + s.GitHub.PrivateKeyFile
	}
	return "STRATA_GITHUB_PRIVATE_KEY"
}

// CheckPrivateKey refuses what GitHub App authentication cannot sign with:
// GitHub issues RSA keys in PEM, PKCS#1 ("RSA PRIVATE KEY") or PKCS#8.
func CheckPrivateKey(key string) error {
	block, _ := pem.Decode([]byte(strings.TrimSpace(key)))
	if block == nil {
		return fmt.Errorf("not a PEM private key; use the .pem file GitHub generated for the App")
	}
	if _, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return nil
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return fmt.Errorf("the PEM block %q is not an RSA private key: %v", block.Type, err)
	}
	if _, ok := k.(*rsa.PrivateKey); !ok {
		return fmt.Errorf("a %T, but GitHub Apps sign with RSA keys", k)
	}
	return nil
}

// UseStoredCredentials completes a config without an App from the
// credentials the setup page stored in the data dir, and refuses them when
// unreadable or when their key is not one GitHub can verify: serve stops
// then, rather than start and fail every job.
func (s *Server) UseStoredCredentials() error {
	if s.Configured() {
		return nil
	}
	creds, err := LoadCredentials(s.DataDir)
	if err != nil {
		return fmt.Errorf("stored App credentials in %s: %w", s.DataDir, err)
	}
	if creds == nil {
		return nil
	}
	if err := CheckPrivateKey(creds.PrivateKey); err != nil {
		return fmt.Errorf("stored App credentials %s: private key: %w", filepath.Join(s.DataDir, CredentialsFile), err)
	}
	s.UseCredentials(creds)
	return nil
}
