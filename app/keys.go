package app

import (
	"github.com/rs/zerolog"

	"strata.dev/strata/config"
	"strata.dev/strata/seal"
	"strata.dev/strata/store"
)

// useKeys gives the store the keys that encrypt saved plans: the server
// config's, or the key generated in the data dir on first start.
func useKeys(cfg *config.Server, st *store.Store, log zerolog.Logger) error {
	keys, err := seal.Load(cfg.EncryptionKey, cfg.EncryptionKeys, cfg.DataDir)
	if err != nil {
		return err
	}
	st.UseKeys(keys)
	if cfg.EncryptionKey == "" && st.Dialect() == store.Postgres {
		// Each replica would generate its own key and could not apply the
		// plans the others saved.
		log.Warn().Str("key_id", keys.ID()).Msgf("saved plans are encrypted with the key in %s/%s: "+
			"with several replicas, set %s to one key for all of them", cfg.DataDir, seal.KeyFile, seal.KeyEnv)
	}
	return nil
}
