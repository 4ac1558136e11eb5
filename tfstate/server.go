// Package tfstate serves Terraform's and OpenTofu's http state backend
// from Strata's store (docs/state.md): GET, POST, LOCK and UNLOCK of one
// layer's state, each request authorized by the per-run credential the
// layer's run got (credential.go). It listens on loopback only (app): the
// runs that use it are on the same host, and nobody else needs to reach it.
package tfstate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"strata.dev/strata/store"
)

// MaxStateSize bounds a state Terraform may write: a layer of 10,000
// resources is a few MB; a state larger than this is refused (413).
const MaxStateSize = 256 << 20

// maxLockInfo bounds the lock info of LOCK and UNLOCK.
const maxLockInfo = 64 << 10

// Path is where the backend is served on its listener.
const Path = "/state"

// Options configure the backend.
type Options struct {
	// Retention is how many versions of each state are kept (0: the
	// store's default, 100).
	Retention int
	// Refused, when set, hears of each refused request: the operation,
	// the state and why (never the credential).
	Refused func(op string, key store.StateKey, status int, why string)
}

// Handler serves the backend at Path.
func Handler(st *store.Store, o Options) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(Path, &backend{st: st, o: o})
	return mux
}

// Address is the URL of a state on the backend whose listener is base
// (http://127.0.0.1:PORT): the state named in the query, so that layer
// names with slashes need no escaping rules of their own.
func Address(base string, key store.StateKey) string {
	if key.Workspace == "" {
		key.Workspace = "default"
	}
	q := url.Values{"repo": {key.Repo}, "layer": {key.Layer}, "workspace": {key.Workspace}}
	return base + Path + "?" + q.Encode()
}

type backend struct {
	st *store.Store
	o  Options
}

func (b *backend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	key := store.StateKey{Repo: q.Get("repo"), Layer: q.Get("layer"), Workspace: q.Get("workspace")}
	if key.Workspace == "" {
		key.Workspace = "default"
	}
	if key.Repo == "" || key.Layer == "" {
		http.Error(w, "name the state: ?repo=OWNER/NAME&layer=LAYER&workspace=WORKSPACE", http.StatusBadRequest)
		return
	}
	_, token, _ := r.BasicAuth()
	var cred *store.StateCredential
	live := false
	if token != "" {
		c, l, err := b.st.StateCredentialOf(r.Context(), store.HashStateToken(token))
		switch {
		case errors.Is(err, store.ErrNotFound):
		case err != nil:
			http.Error(w, "the store did not answer", http.StatusServiceUnavailable)
			return
		default:
			cred, live = c, l
		}
	}
	if v := authorize(cred, live, r.Method, key); v.Status != http.StatusOK {
		if b.o.Refused != nil {
			b.o.Refused(r.Method, key, v.Status, v.Why)
		}
		if v.Status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Basic realm="strata state"`)
		}
		http.Error(w, v.Why, v.Status)
		return
	}
	var err error
	switch r.Method {
	case opGet:
		err = b.get(w, r, key)
	case opPost:
		err = b.post(w, r, key, cred)
	case opLock:
		err = b.lock(w, r, key, cred)
	case opUnlock:
		err = b.unlock(w, r, key)
	}
	if err != nil {
		status := http.StatusInternalServerError
		var he httpError
		if errors.As(err, &he) {
			status = he.status
		}
		if b.o.Refused != nil {
			b.o.Refused(r.Method, key, status, err.Error())
		}
		http.Error(w, err.Error(), status)
	}
}

// httpError is an error with the status that answers it.
type httpError struct {
	status int
	err    error
}

func (e httpError) Error() string { return e.err.Error() }
func (e httpError) Unwrap() error { return e.err }

func (b *backend) get(w http.ResponseWriter, r *http.Request, key store.StateKey) error {
	content, _, err := b.st.CurrentState(r.Context(), key)
	if err != nil {
		return err
	}
	if content == nil {
		// Terraform reads 204 as "no state yet".
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(content)
	return nil
}

func (b *backend) post(w http.ResponseWriter, r *http.Request, key store.StateKey, cred *store.StateCredential) error {
	body, err := readBody(w, r, MaxStateSize)
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return httpError{http.StatusRequestEntityTooLarge, fmt.Errorf("the state is larger than %d MiB", MaxStateSize>>20)}
	}
	if err != nil {
		return httpError{http.StatusBadRequest, err}
	}
	// Terraform names its lock in the write; a write past another's lock
	// is refused, as Terraform's own backends do.
	if held, err := b.st.StateLockOf(r.Context(), key); err != nil {
		return err
	} else if held != nil && held.ID != r.URL.Query().Get("ID") {
		return httpError{http.StatusConflict, fmt.Errorf("the state of %s is locked by another lock (%s)", key, held.ID)}
	}
	meta := store.StateVersion{RunID: cred.RunID, Kind: store.StateByRun}
	if run, err := b.st.RunRecord(r.Context(), cred.RunID); err == nil {
		meta.PR, meta.Commit = run.PR, run.HeadSHA
	}
	_, err = b.st.PutState(r.Context(), key, body, meta, false, b.o.Retention)
	switch {
	case errors.Is(err, store.ErrStateConflict):
		return httpError{http.StatusConflict, err}
	case errors.Is(err, store.ErrNotState):
		return httpError{http.StatusBadRequest, err}
	case err != nil:
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

// readBody reads a request's body, at most limit bytes, into one buffer
// of the size the request announces: io.ReadAll would grow it from 512
// bytes, copying a state of several MB a dozen times.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	body := http.MaxBytesReader(w, r.Body, limit)
	if r.ContentLength <= 0 || r.ContentLength > limit {
		return io.ReadAll(body)
	}
	// The server's body ends at the announced length.
	buf := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

// lockInfo is what the store reads of Terraform's lock info; the whole
// JSON is kept, for whoever the lock blocks.
type lockInfo struct {
	ID string `json:"ID"`
}

func readLockInfo(w http.ResponseWriter, r *http.Request) ([]byte, string, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxLockInfo))
	if err != nil {
		return nil, "", httpError{http.StatusBadRequest, err}
	}
	var info lockInfo
	if err := json.Unmarshal(body, &info); err != nil || info.ID == "" {
		return nil, "", httpError{http.StatusBadRequest, errors.New("the body is not Terraform's lock info with an ID")}
	}
	return body, info.ID, nil
}

func (b *backend) lock(w http.ResponseWriter, r *http.Request, key store.StateKey, cred *store.StateCredential) error {
	body, id, err := readLockInfo(w, r)
	if err != nil {
		return err
	}
	held, ok, err := b.st.LockState(r.Context(), key, store.StateLock{ID: id, Info: body, RunID: cred.RunID})
	if err != nil {
		return err
	}
	if !ok {
		// Terraform shows the holder's lock info from a 423.
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusLocked)
		_, _ = w.Write(held.Info)
		return nil
	}
	w.WriteHeader(http.StatusOK)
	return nil
}

func (b *backend) unlock(w http.ResponseWriter, r *http.Request, key store.StateKey) error {
	_, id, err := readLockInfo(w, r)
	if err != nil {
		return err
	}
	// By its ID only: a run never force-unlocks (an admin does, with /unlock).
	err = b.st.UnlockState(r.Context(), key, id)
	if errors.Is(err, store.ErrStateLockMismatch) {
		return httpError{http.StatusConflict, err}
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	return nil
}
