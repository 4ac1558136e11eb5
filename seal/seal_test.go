package seal

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func newKey(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

func keys(t *testing.T, current []byte, old ...[]byte) *Keys {
	t.Helper()
	k, err := New(current, old...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// A copy of the sealed bytes says nothing of the plaintext, and two seals
// of one plaintext differ (random nonce).
func TestSealHidesThePlaintext(t *testing.T) {
	k := keys(t, newKey(t))
	plain := []byte("PK\x03\x04 hunter2-very-secret")
	a, b := k.Seal(plain, []byte("ctx")), k.Seal(plain, []byte("ctx"))
	if bytes.Contains(a, []byte("hunter2")) || bytes.HasPrefix(a, []byte("PK")) {
		t.Fatalf("sealed bytes show the plaintext: %q", a)
	}
	if bytes.Equal(a, b) {
		t.Fatal("two seals of one plaintext are equal: the nonce is not random")
	}
	got, err := k.Open(a, []byte("ctx"))
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("Open = %q, %v", got, err)
	}
}

// An attacker who can write the database moves a sealed message to another
// context, flips a byte, or cuts it: each is refused.
func TestOpenRefusesMovedOrChangedMessages(t *testing.T) {
	k := keys(t, newKey(t))
	sealed := k.Seal([]byte("plan of layer a"), []byte("acme/infra\x001\x00a"))
	flipped := bytes.Clone(sealed)
	flipped[len(flipped)-1] ^= 1
	for name, tc := range map[string]struct {
		msg, ctx []byte
		want     error
	}{
		"moved":     {sealed, []byte("acme/infra\x001\x00b"), ErrTampered},
		"flipped":   {flipped, []byte("acme/infra\x001\x00a"), ErrTampered},
		"cut":       {sealed[:len(prefix)+idLen+5], []byte("acme/infra\x001\x00a"), ErrTampered},
		"plaintext": {[]byte("PK\x03\x04..."), nil, ErrNotSealed},
		"empty":     {nil, nil, ErrNotSealed},
	} {
		if _, err := k.Open(tc.msg, tc.ctx); !errors.Is(err, tc.want) {
			t.Errorf("%s: Open = %v, want %v", name, err, tc.want)
		}
	}
}

// Rotation: the new key seals, the old one still opens what it sealed; a
// server without the old key names the key it lacks.
func TestRotation(t *testing.T) {
	oldKey, newKey := newKey(t), newKey(t)
	before := keys(t, oldKey).Seal([]byte("old plan"), nil)

	rotated := keys(t, newKey, oldKey)
	if got, err := rotated.Open(before, nil); err != nil || string(got) != "old plan" {
		t.Fatalf("rotated Open(old) = %q, %v", got, err)
	}
	after := rotated.Seal([]byte("new plan"), nil)
	if !strings.Contains(string(after[:len(prefix)+idLen]), KeyID(newKey)) {
		t.Errorf("a new seal does not name the new key %s: %q", KeyID(newKey), after[:len(prefix)+idLen])
	}

	_, err := keys(t, newKey).Open(before, nil)
	var unknown *UnknownKeyError
	if !errors.As(err, &unknown) || unknown.ID != KeyID(oldKey) {
		t.Fatalf("Open without the old key = %v, want UnknownKeyError{%s}", err, KeyID(oldKey))
	}
}

func TestLoadGeneratesAPrivateKeyFileOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	var wg sync.WaitGroup
	ids := make([]string, 8)
	for i := range ids {
		wg.Go(func() {
			k, err := Load("", nil, dir)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = k.ID()
		})
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] {
			t.Fatalf("processes starting together got different keys: %v", ids)
		}
	}
	info, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %o, want 600", info.Mode().Perm())
	}
	again, err := Load("", nil, dir)
	if err != nil || again.ID() != ids[0] {
		t.Fatalf("restart: key %v, %v; want %s", again, err, ids[0])
	}

	// A key file others can read is made private again.
	if err := os.Chmod(filepath.Join(dir, KeyFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load("", nil, dir); err != nil {
		t.Fatal(err)
	}
	if info, _ := os.Stat(filepath.Join(dir, KeyFile)); info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %o after load, want 600", info.Mode().Perm())
	}
}

func TestLoadFromTheEnvironmentWinsOverTheFile(t *testing.T) {
	dir := t.TempDir()
	k := newKey(t)
	got, err := Load(base64.StdEncoding.EncodeToString(k), nil, dir)
	if err != nil || got.ID() != KeyID(k) {
		t.Fatalf("Load = %v, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(dir, KeyFile)); !os.IsNotExist(err) {
		t.Errorf("a key file was made though the key was given: %v", err)
	}
}

// Bad keys are refused with what to do, and the error never shows the value.
func TestParseKeyErrorsSayWhatToDoWithoutTheValue(t *testing.T) {
	short := base64.StdEncoding.EncodeToString([]byte("sixteen-byte-key"))
	for _, v := range []string{short, "not base64 at all!!"} {
		_, err := Load(v, nil, t.TempDir())
		if err == nil {
			t.Fatalf("key %q accepted", v)
		}
		if strings.Contains(err.Error(), v) {
			t.Errorf("the error shows the key: %v", err)
		}
		if !strings.Contains(err.Error(), KeyEnv) || !strings.Contains(err.Error(), "openssl rand -base64 32") {
			t.Errorf("error %q does not say which setting and how to fix it", err)
		}
	}
	if _, err := Load(base64.StdEncoding.EncodeToString(newKey(t)), []string{short}, t.TempDir()); err == nil ||
		!strings.Contains(err.Error(), OldKeysEnv) {
		t.Errorf("bad old key: %v", err)
	}
}
