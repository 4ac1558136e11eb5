package tfstate

import (
	"context"
	"crypto/rand"

	"strata.dev/strata/store"
)

// Credential is what a run passes to Terraform for its layer's state: the
// http backend's addresses and Basic auth (TF_HTTP_*), never written to a
// file.
type Credential struct {
	Address  string
	Username string
	Password string
}

// Issue makes a credential for run runID on key in mode (store.StateRead
// for plans, store.StateWrite for applies): 128 random bits and more
// (rand.Text: 26 base32 characters), of which only the SHA-256 is stored.
// It is live while the run runs and holds the layer's slot; the run
// revokes it when it ends (Revoke).
func Issue(ctx context.Context, st *store.Store, base string, key store.StateKey, runID int64, mode string) (*Credential, error) {
	token := rand.Text()
	if err := st.IssueStateCredential(ctx, store.StateCredential{Key: key, RunID: runID, Mode: mode}, store.HashStateToken(token)); err != nil {
		return nil, err
	}
	return &Credential{Address: Address(base, key), Username: "strata", Password: token}, nil
}

// Revoke ends a run's credentials and frees the state locks it still
// holds (Terraform killed before it unlocked): the run is over.
func Revoke(ctx context.Context, st *store.Store, runID int64) error {
	if err := st.RevokeStateCredentials(ctx, runID); err != nil {
		return err
	}
	_, err := st.ReleaseStateLocksOfRun(ctx, runID)
	return err
}
