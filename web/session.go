package web

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"strata.dev/strata/seal"
)

// A session is who logged in, kept in the browser: a cookie sealed with
// AES-GCM (so neither read nor changed there), HttpOnly (no script reads
// it), SameSite=Lax (no other site's form posts with it) and, behind
// https, Secure. It holds the user's GitHub token, which only this server
// can open, and the CSRF token every form posts back.
type session struct {
	Login   string    `json:"l"`
	Token   string    `json:"t"`
	CSRF    string    `json:"c"`
	Expires time.Time `json:"e"`
}

const (
	sessionCookie = "strata_session"
	// sessionTTL is GitHub's lifetime of an expiring user token: past it,
	// the token no longer works anyway.
	sessionTTL = 8 * time.Hour
)

// sessionContext binds a sealed cookie to its use: a sealed plan or any
// other sealed message cannot pass for a session.
var sessionContext = []byte("strata web session v1")

type sessions struct {
	keys   *seal.Keys
	secure bool
	now    func() time.Time
}

// newSessions derives the cookie key from secret (the webhook secret):
// every replica has it, and rotating it logs everyone out, as it should.
func newSessions(secret string, secure bool, now func() time.Time) (*sessions, error) {
	if secret == "" {
		return nil, errors.New("the web UI needs the webhook secret to seal its sessions")
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("strata web session key"))
	keys, err := seal.New(mac.Sum(nil))
	if err != nil {
		return nil, err
	}
	return &sessions{keys: keys, secure: secure, now: now}, nil
}

// start logs login in on this browser.
func (s *sessions) start(w http.ResponseWriter, login, token string) {
	sess := session{Login: login, Token: token, CSRF: randomToken(), Expires: s.now().Add(sessionTTL)}
	plain, _ := json.Marshal(sess) // a struct of strings and a time marshals
	http.SetCookie(w, &http.Cookie{
		Name: sessionCookie, Value: base64.RawURLEncoding.EncodeToString(s.keys.Seal(plain, sessionContext)),
		Path: "/", MaxAge: int(sessionTTL.Seconds()), HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode,
	})
}

// read returns the request's session, or false when there is none or it
// was changed, sealed by another server, or has expired.
func (s *sessions) read(r *http.Request) (session, bool) {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return session{}, false
	}
	sealed, err := base64.RawURLEncoding.DecodeString(c.Value)
	if err != nil {
		return session{}, false
	}
	plain, err := s.keys.Open(sealed, sessionContext)
	if err != nil {
		return session{}, false
	}
	var sess session
	if json.Unmarshal(plain, &sess) != nil || sess.Login == "" || !s.now().Before(sess.Expires) {
		return session{}, false
	}
	return sess, true
}

// end forgets the browser's session.
func (s *sessions) end(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Path: "/", MaxAge: -1, HttpOnly: true, Secure: s.secure, SameSite: http.SameSiteLaxMode})
}

// csrfField is the name of the form field that carries the CSRF token.
const csrfField = "csrf"

// checkCSRF refuses a form post that does not carry the session's token:
// another site can make a browser post, but cannot read the token.
func checkCSRF(r *http.Request, sess session) bool {
	got := r.PostFormValue(csrfField)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(sess.CSRF)) == 1
}

// randomToken is 128 bits from crypto/rand, which never fails (Go 1.24+).
func randomToken() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
