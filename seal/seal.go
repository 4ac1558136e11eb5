// Package seal encrypts what Strata keeps at rest that must not be read from
// a copy of the database (saved Terraform plans, which hold the values
// Terraform marks sensitive): AES-256-GCM with a random nonce per message.
//
// A sealed message names the key that sealed it, so keys can rotate: a
// server seals with its current key and opens with the current key or any
// old key it still has. A message is bound to a context (for a plan: its
// repository, PR, layer and head), so one cannot be moved to another row.
package seal

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// KeySize is the length of a key: AES-256.
const KeySize = 32

// prefix starts every sealed message, then the key id, ':', the nonce and
// the ciphertext with its tag. Readable, so that a database dump shows
// what the bytes are.
const prefix = "strata-sealed:v1:"

// idLen is the length of a key id in hex: a hash of the key, so operators
// need not name keys.
const idLen = 8

// ErrNotSealed is returned by Open for bytes that are not a sealed message,
// such as a plan stored before encryption existed.
var ErrNotSealed = errors.New("not sealed")

// ErrTampered is returned by Open when the message fails its integrity
// check: changed, cut, or moved to another context.
var ErrTampered = errors.New("failed its integrity check")

// UnknownKeyError is returned by Open for a message sealed with a key the
// Keys do not hold.
type UnknownKeyError struct{ ID string }

func (e *UnknownKeyError) Error() string {
	return fmt.Sprintf("sealed with key %s, which this server does not have", e.ID)
}

// Keys seal with one key and open with it or with older ones.
type Keys struct {
	current *key
	byID    map[string]*key
}

type key struct {
	id   string
	aead cipher.AEAD
}

// New returns Keys that seal with current and open with current and old.
func New(current []byte, old ...[]byte) (*Keys, error) {
	k := &Keys{byID: map[string]*key{}}
	for i, raw := range append([][]byte{current}, old...) {
		if len(raw) != KeySize {
			return nil, fmt.Errorf("encryption key %d: %d bytes, want %d", i+1, len(raw), KeySize)
		}
		block, err := aes.NewCipher(raw)
		if err != nil {
			return nil, err
		}
		aead, err := cipher.NewGCM(block)
		if err != nil {
			return nil, err
		}
		kk := &key{id: KeyID(raw), aead: aead}
		if i == 0 {
			k.current = kk
		}
		if _, dup := k.byID[kk.id]; !dup {
			k.byID[kk.id] = kk
		}
	}
	return k, nil
}

// KeyID names a key without revealing it: the start of a hash of it.
func KeyID(raw []byte) string {
	sum := sha256.Sum256(append([]byte("strata seal key id\x00"), raw...))
	return hex.EncodeToString(sum[:])[:idLen]
}

// ID is the id of the key that seals.
func (k *Keys) ID() string { return k.current.id }

// Seal encrypts plaintext with the current key, bound to context.
func (k *Keys) Seal(plaintext, context []byte) []byte {
	nonce := make([]byte, k.current.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic(err) // crypto/rand does not fail on supported systems
	}
	out := make([]byte, 0, len(prefix)+idLen+1+len(nonce)+len(plaintext)+k.current.aead.Overhead())
	out = append(out, prefix...)
	out = append(out, k.current.id...)
	out = append(out, ':')
	out = append(out, nonce...)
	return k.current.aead.Seal(out, nonce, plaintext, context)
}

// Open decrypts a message sealed by Seal with the same context.
func (k *Keys) Open(sealed, context []byte) ([]byte, error) {
	rest, ok := bytes.CutPrefix(sealed, []byte(prefix))
	if !ok || len(rest) < idLen+1 || rest[idLen] != ':' {
		return nil, ErrNotSealed
	}
	id := string(rest[:idLen])
	kk := k.byID[id]
	if kk == nil {
		return nil, &UnknownKeyError{ID: id}
	}
	rest = rest[idLen+1:]
	n := kk.aead.NonceSize()
	if len(rest) < n+kk.aead.Overhead() {
		return nil, ErrTampered
	}
	plain, err := kk.aead.Open(nil, rest[:n], rest[n:], context)
	if err != nil {
		return nil, ErrTampered
	}
	return plain, nil
}

// IsSealed reports whether b looks like a sealed message (without opening it).
func IsSealed(b []byte) bool { return bytes.HasPrefix(b, []byte(prefix)) }
