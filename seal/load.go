package seal

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// KeyFile is the key generated in the data dir when the server config
// names none.
const KeyFile = "encryption.key"

// Environment variables of the keys, named in errors.
const (
	KeyEnv     = "STRATA_ENCRYPTION_KEY"
	OldKeysEnv = "STRATA_ENCRYPTION_KEYS"
)

// ParseKey reads a key given as base64 (standard or URL alphabet, padded
// or not). what names the setting in errors, which never show the value.
func ParseKey(what, b64 string) ([]byte, error) {
	s := strings.TrimSpace(b64)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if raw, err := enc.DecodeString(s); err == nil {
			if len(raw) != KeySize {
				return nil, fmt.Errorf("%s: the key is %d bytes, want %d: generate one with `openssl rand -base64 32`", what, len(raw), KeySize)
			}
			return raw, nil
		}
	}
	return nil, fmt.Errorf("%s is not base64: generate a key with `openssl rand -base64 32`", what)
}

// Load returns the server's keys: current (base64) seals, old (base64)
// only open. Without current, the key is read from dataDir/encryption.key,
// which is created (mode 0600) on first start.
func Load(current string, old []string, dataDir string) (*Keys, error) {
	var cur []byte
	var err error
	if strings.TrimSpace(current) != "" {
		cur, err = ParseKey(KeyEnv, current)
	} else {
		cur, err = loadKeyFile(filepath.Join(dataDir, KeyFile))
	}
	if err != nil {
		return nil, err
	}
	var olds [][]byte
	for i, o := range old {
		if strings.TrimSpace(o) == "" {
			continue
		}
		raw, err := ParseKey(fmt.Sprintf("%s (key %d)", OldKeysEnv, i+1), o)
		if err != nil {
			return nil, err
		}
		olds = append(olds, raw)
	}
	return New(cur, olds...)
}

// loadKeyFile reads the generated key, making it first when it does not
// exist. Several processes may start at once on one data dir: the key is
// written to a temporary file and linked into place, so exactly one wins
// and every process reads the winner's key.
func loadKeyFile(path string) ([]byte, error) {
	what := "encryption key file " + path
	raw, err := readKeyFile(path, what)
	if !errors.Is(err, os.ErrNotExist) {
		return raw, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".encryption-key-*")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return readKeyFile(path, what)
}

// readKeyFile reads a key file. One that others may read (a volume mounted
// with a group, a copy made by hand) is made private again: the key is
// what keeps a copy of the database from being read.
func readKeyFile(path, what string) ([]byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if info.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(path, 0o600); err != nil {
			return nil, fmt.Errorf("%s is readable by others and cannot be made private: %w; run `chmod 600 %s`", what, err, path)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	raw, err := ParseKey(what, string(data))
	if err != nil {
		return nil, fmt.Errorf("%w; restore the file from a backup, or delete it to generate a new key (saved plans must then be planned again)", err)
	}
	return raw, nil
}
