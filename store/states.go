package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Managed Terraform state (docs/state.md). Each layer's state is a list of
// versions, newest by id, sealed with the store's keys; Terraform's state
// lock is one row per key; the http backend's per-run credentials are kept
// by their SHA-256 only (statecreds.go).
//
// The API:
//
//	PutState            store a new version, with Terraform's serial and lineage rules
//	CurrentState        the newest version and its content (nil when none)
//	StateVersions       the versions, newest first, without content
//	StateVersionContent one version with its content
//	RollbackState       a new version with an older version's content
//	LockState           take Terraform's state lock, or see who holds it
//	UnlockState         release it (by its id, or by force with "")
//	StateLockOf         the lock of a key, nil when free
//	StateLocksOfRun     the locks a run took
//	ReleaseStateLocksOfRun  free them, when the run ended without Terraform unlocking
//	                        (a lost run's go with its claim, ClaimLostRun)

// StateKey names one state: a layer of a repository in one workspace.
// Layer is the layer's name in .strata.yaml; Workspace "" is "default".
type StateKey struct{ Repo, Layer, Workspace string }

func (k StateKey) norm() StateKey {
	if k.Workspace == "" {
		k.Workspace = "default"
	}
	return k
}

// String reads as people name it: acme/infra net (workspace prod).
func (k StateKey) String() string {
	k = k.norm()
	if k.Workspace == "default" {
		return k.Repo + " " + k.Layer
	}
	return k.Repo + " " + k.Layer + " (workspace " + k.Workspace + ")"
}

// Kinds of state versions: who wrote them.
const (
	StateByRun      = "run"
	StateByPush     = "push"
	StateByRollback = "rollback"
)

// DefaultStateRetention is how many versions of a state are kept when the
// server's state.retention is not set.
const DefaultStateRetention = 100

// StateVersion is one stored version of a state, without its content.
type StateVersion struct {
	ID        int64
	Key       StateKey
	Serial    int64
	Lineage   string
	Size      int
	CreatedAt time.Time
	RunID     int64
	PR        int
	Commit    string
	// By is the GitHub login behind a push or a rollback, "" for runs.
	By   string
	Kind string // StateByRun, StateByPush or StateByRollback
	// RolledBackFrom is the version whose content a rollback restored.
	RolledBackFrom int64
}

// ErrStateConflict is a write Terraform's own backends would refuse: another
// lineage, an older serial, or the same serial with other content. The
// wrapping error says which.
var ErrStateConflict = errors.New("state conflict")

// ErrNotState is content that is not a Terraform state file.
var ErrNotState = errors.New("not a Terraform state")

// ParseStateHeader reads a state's serial and lineage. Terraform's and
// OpenTofu's state files (version 4) carry both at the top level, before
// the resources: the decoder reads the top-level keys and stops once it has
// the version, serial and lineage, so that a state of several MB is not
// decoded whole on every write (docs/benchmarks.md). The rest is checked
// to be JSON (json.Valid, a fraction of decoding it).
func ParseStateHeader(content []byte) (serial int64, lineage string, err error) {
	notState := func(why any) (int64, string, error) { return 0, "", fmt.Errorf("%w: %v", ErrNotState, why) }
	if !json.Valid(content) {
		return notState("it is not JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(content))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return notState("it is not a JSON object")
	}
	var version *int
	var ser *int64
	var lin *string
	for dec.More() && (version == nil || ser == nil || lin == nil) {
		t, err := dec.Token()
		if err != nil {
			return notState(err)
		}
		var dst any
		switch t {
		case "version":
			dst = &version
		case "serial":
			dst = &ser
		case "lineage":
			dst = &lin
		default:
			dst = &json.RawMessage{}
		}
		if err := dec.Decode(dst); err != nil {
			return notState(err)
		}
	}
	if version == nil || ser == nil || lin == nil || *lin == "" {
		return notState("it has no version, serial or lineage")
	}
	return *ser, *lin, nil
}

// stateContext binds sealed content to its key, serial and lineage: a
// version copied onto another layer, workspace or repository does not open.
func stateContext(k StateKey, serial int64, lineage string) []byte {
	return []byte(fmt.Sprintf("state\x00%s\x00%s\x00%s\x00%d\x00%s", k.Repo, k.Layer, k.Workspace, serial, lineage))
}

const stateVersionColumns = `id, repo, layer, workspace, serial, lineage, size, created_at, run_id, pr, commit_sha, by_login, kind, rolled_back_from`

func scanStateVersion(row interface{ Scan(...any) error }, more ...any) (*StateVersion, error) {
	var v StateVersion
	var created int64
	dest := append([]any{&v.ID, &v.Key.Repo, &v.Key.Layer, &v.Key.Workspace, &v.Serial, &v.Lineage, &v.Size,
		&created, &v.RunID, &v.PR, &v.Commit, &v.By, &v.Kind, &v.RolledBackFrom}, more...)
	if err := row.Scan(dest...); err != nil {
		return nil, err
	}
	v.CreatedAt = fromMillis(created)
	return &v, nil
}

// PutState stores content as the key's new version, with meta's RunID, PR,
// Commit, By, Kind and RolledBackFrom (Kind defaults to StateByRun); the
// serial and lineage are read from content. Unless force, it keeps
// Terraform's rules: another lineage or an older serial is refused
// (ErrStateConflict, saying why); the same serial with the same content is
// a no-op returning the current version; the same serial with other content
// is refused. Then it keeps the newest keep versions (0: the default).
func (s *Store) PutState(ctx context.Context, key StateKey, content []byte, meta StateVersion, force bool, keep int) (*StateVersion, error) {
	key = key.norm()
	if s.keys == nil {
		return nil, fmt.Errorf("save the state of %s: the store has no encryption keys", key)
	}
	serial, lineage, err := ParseStateHeader(content)
	if err != nil {
		return nil, err
	}
	if meta.Kind == "" {
		meta.Kind = StateByRun
	}
	if keep <= 0 {
		keep = DefaultStateRetention
	}
	digest := sha256.Sum256(content)
	// Compressed, then sealed, before the transaction: a 10,000-resource
	// state is 4 MB of JSON that gzip's fastest level makes ten to thirty
	// times smaller in a few ms, so fewer bytes to seal and fewer pages
	// for the database to write (docs/benchmarks.md); and the database's
	// writer is not held while it is done.
	packed, err := compressState(content)
	if err != nil {
		return nil, err
	}
	sealed := s.keys.Seal(packed, stateContext(key, serial, lineage))

	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if s.dialect == Postgres {
		// Two replicas writing one state: the second waits, then sees the
		// first's version (the check below is a read-then-write).
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext($1))`, "state "+key.String()); err != nil {
			return nil, err
		}
	}
	var curDigest []byte
	cur, err := scanStateVersion(tx.QueryRowContext(ctx, s.rebind(`SELECT `+stateVersionColumns+`, digest FROM state_versions
		WHERE repo = ? AND layer = ? AND workspace = ? ORDER BY id DESC LIMIT 1`), key.Repo, key.Layer, key.Workspace), &curDigest)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		cur = nil
	case err != nil:
		return nil, err
	}
	if cur != nil && !force {
		switch {
		case cur.Lineage != lineage:
			return nil, fmt.Errorf("%w: the state of %s has lineage %s, this one %s: it is another state (push it with force to replace it)",
				ErrStateConflict, key, cur.Lineage, lineage)
		case serial < cur.Serial:
			return nil, fmt.Errorf("%w: the state of %s is at serial %d, this one is older (%d): pull the current state first",
				ErrStateConflict, key, cur.Serial, serial)
		case serial == cur.Serial && bytes.Equal(curDigest, digest[:]):
			return cur, nil
		case serial == cur.Serial:
			return nil, fmt.Errorf("%w: the state of %s already has serial %d with other content: a changed state needs a higher serial",
				ErrStateConflict, key, serial)
		}
	}
	var id int64
	err = tx.QueryRowContext(ctx, s.rebind(`INSERT INTO state_versions (repo, layer, workspace, serial, lineage, size, digest, content,
		created_at, run_id, pr, commit_sha, by_login, kind, rolled_back_from) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`),
		key.Repo, key.Layer, key.Workspace, serial, lineage, len(content), digest[:], sealed,
		now(), meta.RunID, meta.PR, meta.Commit, meta.By, meta.Kind, meta.RolledBackFrom).Scan(&id)
	if err != nil {
		return nil, fmt.Errorf("save the state of %s: %w", key, err)
	}
	// Retention: the newest keep versions stay. The newest version past
	// them, if any, is found on the key's index; only then is anything
	// deleted.
	var past int64
	err = tx.QueryRowContext(ctx, s.rebind(`SELECT id FROM state_versions WHERE repo = ? AND layer = ? AND workspace = ?
		ORDER BY id DESC LIMIT 1 OFFSET ?`), key.Repo, key.Layer, key.Workspace, keep).Scan(&past)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("prune the versions of %s: %w", key, err)
	default:
		if _, err := tx.ExecContext(ctx, s.rebind(`DELETE FROM state_versions WHERE repo = ? AND layer = ? AND workspace = ? AND id <= ?`),
			key.Repo, key.Layer, key.Workspace, past); err != nil {
			return nil, fmt.Errorf("prune the versions of %s: %w", key, err)
		}
	}
	v, err := scanStateVersion(tx.QueryRowContext(ctx, s.rebind(`SELECT `+stateVersionColumns+` FROM state_versions WHERE id = ?`), id))
	if err != nil {
		return nil, err
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("save the state of %s: %w", key, err)
	}
	return v, nil
}

// CurrentState returns the newest version of a state with its content, or
// nil, nil, nil when the key has none.
func (s *Store) CurrentState(ctx context.Context, key StateKey) ([]byte, *StateVersion, error) {
	key = key.norm()
	var sealed []byte
	v, err := scanStateVersion(s.queryRow(ctx, `SELECT `+stateVersionColumns+`, content FROM state_versions
		WHERE repo = ? AND layer = ? AND workspace = ? ORDER BY id DESC LIMIT 1`, key.Repo, key.Layer, key.Workspace), &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	content, err := s.openState(v, sealed)
	if err != nil {
		return nil, nil, err
	}
	return content, v, nil
}

// StateVersions lists a state's versions, newest first, at most limit
// (0: all that are kept).
func (s *Store) StateVersions(ctx context.Context, key StateKey, limit int) ([]*StateVersion, error) {
	key = key.norm()
	q := `SELECT ` + stateVersionColumns + ` FROM state_versions WHERE repo = ? AND layer = ? AND workspace = ? ORDER BY id DESC`
	args := []any{key.Repo, key.Layer, key.Workspace}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	return queryAll(ctx, s, func(r rowScanner) (*StateVersion, error) { return scanStateVersion(r) }, q, args...)
}

// StateVersionContent returns one version of a state with its content, or
// ErrNotFound (also for a version of another key).
func (s *Store) StateVersionContent(ctx context.Context, key StateKey, id int64) ([]byte, *StateVersion, error) {
	key = key.norm()
	var sealed []byte
	v, err := scanStateVersion(s.queryRow(ctx, `SELECT `+stateVersionColumns+`, content FROM state_versions
		WHERE repo = ? AND layer = ? AND workspace = ? AND id = ?`, key.Repo, key.Layer, key.Workspace, id), &sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil, ErrNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	content, err := s.openState(v, sealed)
	if err != nil {
		return nil, nil, err
	}
	return content, v, nil
}

// RollbackState makes a new version with version id's content, its serial
// set above the current one (so that Terraform's next write, one higher,
// is accepted), recorded as a rollback by the login by.
func (s *Store) RollbackState(ctx context.Context, key StateKey, id int64, by string, keep int) (*StateVersion, error) {
	key = key.norm()
	old, _, err := s.StateVersionContent(ctx, key, id)
	if err != nil {
		return nil, fmt.Errorf("roll %s back to version %d: %w", key, id, err)
	}
	_, cur, err := s.CurrentState(ctx, key)
	if err != nil {
		return nil, err
	}
	content, err := withSerial(old, cur.Serial+1)
	if err != nil {
		return nil, err
	}
	// Forced: the old version may be of another lineage (after a push).
	return s.PutState(ctx, key, content, StateVersion{By: by, Kind: StateByRollback, RolledBackFrom: id}, true, keep)
}

// withSerial returns a state with its serial replaced, the rest of its
// JSON as it was.
func withSerial(content []byte, serial int64) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(content, &m); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNotState, err)
	}
	m["serial"] = json.RawMessage(fmt.Sprint(serial))
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(out, '\n'), nil
}

func (s *Store) openState(v *StateVersion, sealed []byte) ([]byte, error) {
	if s.keys == nil {
		return nil, fmt.Errorf("read the state of %s: the store has no encryption keys", v.Key)
	}
	packed, err := s.keys.Open(sealed, stateContext(v.Key, v.Serial, v.Lineage))
	if err != nil {
		return nil, fmt.Errorf("the state of %s (version %d) does not open: %w", v.Key, v.ID, err)
	}
	content, err := decompressState(packed, v.Size)
	if err != nil {
		return nil, fmt.Errorf("the state of %s (version %d) does not decompress: %w", v.Key, v.ID, err)
	}
	return content, nil
}

// compressState gzips a state at the fastest level: a few ms for MBs of
// Terraform's repetitive JSON.
func compressState(content []byte) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(content)/8 + 64)
	w, err := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(content); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// decompressState undoes compressState; size is the state's size as
// recorded. Versions written before states were compressed are the JSON
// itself, which never starts with gzip's magic bytes (1f 8b).
func decompressState(packed []byte, size int) ([]byte, error) {
	if len(packed) < 2 || packed[0] != 0x1f || packed[1] != 0x8b {
		return packed, nil
	}
	r, err := gzip.NewReader(bytes.NewReader(packed))
	if err != nil {
		return nil, err
	}
	// The size is the database's word, not sealed with the content: it
	// sizes the buffer up to a bound, and no more.
	out := bytes.NewBuffer(make([]byte, 0, min(max(size, 0), 64<<20)+bytes.MinRead))
	if _, err := out.ReadFrom(r); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// StateLock is Terraform's lock on a state: its ID and the lock info JSON
// Terraform sent (who, what operation, when), and the run that took it.
type StateLock struct {
	Key       StateKey
	ID        string
	Info      []byte
	RunID     int64
	CreatedAt time.Time
}

const stateLockColumns = `repo, layer, workspace, lock_id, info, run_id, created_at`

func scanStateLock(row interface{ Scan(...any) error }) (*StateLock, error) {
	var l StateLock
	var created int64
	if err := row.Scan(&l.Key.Repo, &l.Key.Layer, &l.Key.Workspace, &l.ID, &l.Info, &l.RunID, &created); err != nil {
		return nil, err
	}
	l.CreatedAt = fromMillis(created)
	return &l, nil
}

// LockState takes the state's lock, or returns the lock that holds it. Taking
// it again with the same ID succeeds (Terraform retries). The insert is the
// claim: across replicas one lock wins.
func (s *Store) LockState(ctx context.Context, key StateKey, lock StateLock) (held *StateLock, acquired bool, err error) {
	key = key.norm()
	if lock.ID == "" {
		return nil, false, fmt.Errorf("lock the state of %s: the lock has no ID", key)
	}
	if lock.Info == nil {
		lock.Info = []byte{}
	}
	if _, err := s.exec(ctx, `INSERT INTO state_locks (`+stateLockColumns+`) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (repo, layer, workspace) DO NOTHING`,
		key.Repo, key.Layer, key.Workspace, lock.ID, lock.Info, lock.RunID, now()); err != nil {
		return nil, false, fmt.Errorf("lock the state of %s: %w", key, err)
	}
	cur, err := s.StateLockOf(ctx, key)
	if err != nil {
		return nil, false, err
	}
	if cur == nil {
		// Released between the insert and the read: try again.
		return s.LockState(ctx, key, lock)
	}
	return cur, cur.ID == lock.ID, nil
}

// ErrStateLockMismatch is an unlock with another lock's ID.
var ErrStateLockMismatch = errors.New("the state is locked by another lock")

// UnlockState releases the state's lock if its ID is id; id "" releases any
// lock (an admin's force unlock). Unlocking a free state is no error;
// another lock's ID is ErrStateLockMismatch.
func (s *Store) UnlockState(ctx context.Context, key StateKey, id string) error {
	key = key.norm()
	q := `DELETE FROM state_locks WHERE repo = ? AND layer = ? AND workspace = ?`
	args := []any{key.Repo, key.Layer, key.Workspace}
	if id != "" {
		q += ` AND lock_id = ?`
		args = append(args, id)
	}
	res, err := s.exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("unlock the state of %s: %w", key, err)
	}
	if n, _ := res.RowsAffected(); n == 1 || id == "" {
		return nil
	}
	cur, err := s.StateLockOf(ctx, key)
	if err != nil || cur == nil {
		return err
	}
	return fmt.Errorf("%w (%s, not %s)", ErrStateLockMismatch, cur.ID, id)
}

// StateLockOf returns the state's lock, nil when it is free.
func (s *Store) StateLockOf(ctx context.Context, key StateKey) (*StateLock, error) {
	key = key.norm()
	l, err := scanStateLock(s.queryRow(ctx, `SELECT `+stateLockColumns+` FROM state_locks WHERE repo = ? AND layer = ? AND workspace = ?`,
		key.Repo, key.Layer, key.Workspace))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return l, err
}

// StateLocksOfRun lists the state locks a run holds.
func (s *Store) StateLocksOfRun(ctx context.Context, runID int64) ([]*StateLock, error) {
	return queryAll(ctx, s, scanStateLock, `SELECT `+stateLockColumns+` FROM state_locks WHERE run_id = ? ORDER BY repo, layer, workspace`, runID)
}

// ReleaseStateLocksOfRun frees the state locks a run holds, when the run
// ended without Terraform unlocking, and returns them. A lost run's are
// freed in the transaction that claims it (ClaimLostRun).
func (s *Store) ReleaseStateLocksOfRun(ctx context.Context, runID int64) ([]*StateLock, error) {
	locks, err := s.StateLocksOfRun(ctx, runID)
	if err != nil {
		return nil, err
	}
	for _, l := range locks {
		if err := s.UnlockState(ctx, l.Key, l.ID); err != nil && !errors.Is(err, ErrStateLockMismatch) {
			return nil, err
		}
	}
	return locks, nil
}
