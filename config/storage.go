package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"strata.dev/strata/seal"
	"strata.dev/strata/words"
)

// Storage is what Strata keeps on disk and in its database: how saved plans
// are encrypted, how long records stay, and how much the source cache may
// hold. Its keys sit at the top level of the server config.
type Storage struct {
	// EncryptionKey (base64, 32 bytes) encrypts saved plans. Empty: a key
	// generated in the data dir (encryption.key, mode 0600) on first start.
	// Replicas sharing a database need the same key.
	EncryptionKey string `yaml:"encryption_key"`
	// EncryptionKeys are earlier keys, which only decrypt: the plans saved
	// before a rotation stay appliable.
	EncryptionKeys []string `yaml:"encryption_keys"`
	// Retention is how long webhook deliveries, run logs and plan reports
	// are kept (default 720h, 30 days; at least 72h, GitHub's redelivery
	// window).
	Retention time.Duration `yaml:"retention"`
	// SourceCacheMaxBytes bounds the fetched trees kept on disk; the least
	// recently used trees not in use go first (0: 5 GiB).
	SourceCacheMaxBytes int64 `yaml:"source_cache_max_bytes"`
}

// DefaultRetention is Retention when the config sets none.
const DefaultRetention = 30 * 24 * time.Hour

// minRetention is GitHub's redelivery window: a delivery id pruned earlier
// would let a redelivery run its commands again.
const minRetention = 72 * time.Hour

func (s *Storage) applyEnv(getenv func(string) (string, bool)) error {
	if v, ok := getenv(seal.KeyEnv); ok {
		s.EncryptionKey = v
	}
	if v, ok := getenv(seal.OldKeysEnv); ok {
		s.EncryptionKeys = nil
		for _, k := range strings.Split(v, ",") {
			if k = strings.TrimSpace(k); k != "" {
				s.EncryptionKeys = append(s.EncryptionKeys, k)
			}
		}
	}
	if v, ok := getenv("STRATA_RETENTION"); ok && v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("STRATA_RETENTION %q is not a duration (say 720h)", v)
		}
		s.Retention = d
	}
	if v, ok := getenv("STRATA_SOURCE_CACHE_MAX_BYTES"); ok && v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("STRATA_SOURCE_CACHE_MAX_BYTES %q is not a positive number of bytes", v)
		}
		s.SourceCacheMaxBytes = n
	}
	return nil
}

func (s *Storage) applyDefaults() {
	if s.Retention == 0 {
		s.Retention = DefaultRetention
	}
}

// problems checks the keys without ever showing them.
func (s *Storage) problems() []string {
	var out []string
	if s.EncryptionKey != "" {
		if _, err := seal.ParseKey(seal.KeyEnv+" (encryption_key)", s.EncryptionKey); err != nil {
			out = append(out, err.Error())
		}
	}
	for i, k := range s.EncryptionKeys {
		if _, err := seal.ParseKey(fmt.Sprintf("%s (encryption_keys) key %d", seal.OldKeysEnv, i+1), k); err != nil {
			out = append(out, err.Error())
		}
	}
	if s.Retention < minRetention {
		out = append(out, fmt.Sprintf("STRATA_RETENTION (retention) %s is shorter than 72h: GitHub redelivers webhooks for 3 days", words.Duration(s.Retention)))
	}
	if s.SourceCacheMaxBytes < 0 {
		out = append(out, "source_cache_max_bytes must not be negative")
	}
	return out
}
