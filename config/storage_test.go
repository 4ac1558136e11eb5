package config

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStorageConfigFromFileAndEnvironment(t *testing.T) {
	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	old1 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("a", 32)))
	old2 := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("b", 32)))
	file := filepath.Join(t.TempDir(), "strata.yaml")
	os.WriteFile(file, []byte("retention: 240h\nsource_cache_max_bytes: 1024\nencryption_keys: ["+old1+"]\n"), 0o600)
	cfg, err := LoadServer(file, envOf(map[string]string{
		"STRATA_ENCRYPTION_KEY": key, "STRATA_ENCRYPTION_KEYS": old1 + ", " + old2, "STRATA_SOURCE_CACHE_MAX_BYTES": "2048",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Retention != 240*time.Hour || cfg.SourceCacheMaxBytes != 2048 {
		t.Errorf("retention %v, cache %d; want 240h from the file, 2048 from the environment", cfg.Retention, cfg.SourceCacheMaxBytes)
	}
	if cfg.EncryptionKey != key || len(cfg.EncryptionKeys) != 2 || cfg.EncryptionKeys[1] != old2 {
		t.Errorf("keys not read from the environment: %d old keys", len(cfg.EncryptionKeys))
	}

	def, err := LoadServer("", envOf(nil))
	if err != nil || def.Retention != 30*24*time.Hour || def.EncryptionKey != "" || def.SourceCacheMaxBytes != 0 {
		t.Fatalf("defaults: retention %v, cache %d (%v)", def.Retention, def.SourceCacheMaxBytes, err)
	}
}

// A bad key is refused with the setting's name and how to make one, and
// the message never shows the key.
func TestStorageConfigRefusesBadValuesWithoutShowingKeys(t *testing.T) {
	short := base64.StdEncoding.EncodeToString([]byte("only-16-bytes-ab"))
	for env, want := range map[string]map[string]string{
		"STRATA_ENCRYPTION_KEY":  {"STRATA_ENCRYPTION_KEY": short},
		"STRATA_ENCRYPTION_KEYS": {"STRATA_ENCRYPTION_KEYS": "not-a-key!"},
		"72h":                    {"STRATA_RETENTION": "1h"},
		"STRATA_RETENTION":       {"STRATA_RETENTION": "a month"},
		"bytes":                  {"STRATA_SOURCE_CACHE_MAX_BYTES": "-1"},
	} {
		_, err := LoadServer("", envOf(want))
		if err == nil || !strings.Contains(err.Error(), env) {
			t.Errorf("%v: err = %v, want it to name %s", want, err, env)
			continue
		}
		if strings.Contains(err.Error(), short) || strings.Contains(err.Error(), "not-a-key!") {
			t.Errorf("the error shows the key: %v", err)
		}
	}
}
