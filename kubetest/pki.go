package kubetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// adminToken is the bearer token of the test cluster's only user, a member
// of system:masters, used by the tests and the components alike.
const adminToken = "strata-test-admin-token"

// pkiFiles are the credentials the components are started with.
type pkiFiles struct {
	tokens              string // the API server's token auth file
	saPrivate, saPublic string // service account token signing keys
	kwokCert, kwokKey   string // kwok's serving certificate, as a kubelet's
	caCert              string // what pods are told to trust
}

func writePKI(dir string) (pkiFiles, error) {
	p := pkiFiles{
		tokens:    filepath.Join(dir, "tokens.csv"),
		saPrivate: filepath.Join(dir, "sa.key"),
		saPublic:  filepath.Join(dir, "sa.pub"),
		kwokCert:  filepath.Join(dir, "kwok.crt"),
		kwokKey:   filepath.Join(dir, "kwok.key"),
	}
	p.caCert = p.kwokCert
	if err := os.WriteFile(p.tokens, []byte(adminToken+`,admin,admin,"system:masters"`+"\n"), 0o600); err != nil {
		return p, err
	}
	sa, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	if err := writeKey(p.saPrivate, sa); err != nil {
		return p, err
	}
	pub, err := x509.MarshalPKIXPublicKey(&sa.PublicKey)
	if err != nil {
		return p, err
	}
	if err := os.WriteFile(p.saPublic, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return p, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return p, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "kwok-node-0"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost", "kwok-node-0"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return p, err
	}
	if err := os.WriteFile(p.kwokCert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		return p, err
	}
	return p, writeKey(p.kwokKey, key)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}
