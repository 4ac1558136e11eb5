package app_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"net"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"strata.dev/strata/app"
	"strata.dev/strata/config"
	"strata.dev/strata/githubtest"
)

// A key that is a valid RSA key but not the App's passes every local
// check; GitHub refuses it, and the server stops at start saying so,
// instead of reporting ready and failing every job.
func TestServerWithAKeyGitHubRefusesDoesNotStart(t *testing.T) {
	gh := githubtest.NewServer(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.LoadServerFrom(&config.Server{
		DataDir:     t.TempDir(),
		MetricsAddr: "off",
		GitHub: config.GitHub{
			AppID:         gh.AppID(),
			PrivateKey:    string(pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(other)})),
			WebhookSecret: "s3cret-value", APIURL: gh.APIURL(), GraphQLURL: gh.GraphQLURL(), WebURL: gh.WebURL(),
		},
	}, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("the key is well-formed, config must load: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := app.New(context.Background(), cfg, zerolog.Nop(), app.Options{Listener: ln})
	if err == nil {
		srv.Close()
		t.Fatal("the server started with a key GitHub refuses")
	}
	if !strings.Contains(err.Error(), "GitHub refused the App's credentials (401") || !strings.Contains(err.Error(), "is not App") {
		t.Fatalf("New = %v, want GitHub's refusal explained", err)
	}
}
