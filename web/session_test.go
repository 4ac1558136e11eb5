package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestSessionCookie(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	s, err := newSessions("webhook-secret", true, clock)
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.start(rec, "alice", "ghu_token")
	res := rec.Result()
	cookies := res.Cookies()
	if len(cookies) != 1 {
		t.Fatalf("cookies: %v", cookies)
	}
	c := cookies[0]
	if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteLaxMode || c.Path != "/" {
		t.Errorf("cookie attributes: HttpOnly=%v Secure=%v SameSite=%v Path=%q", c.HttpOnly, c.Secure, c.SameSite, c.Path)
	}
	for _, leak := range []string{"alice", "ghu_token"} {
		if strings.Contains(c.Value, leak) {
			t.Errorf("the cookie shows %q: %s", leak, c.Value)
		}
	}
	req := func(value string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/", nil)
		r.AddCookie(&http.Cookie{Name: sessionCookie, Value: value})
		return r
	}
	sess, ok := s.read(req(c.Value))
	if !ok || sess.Login != "alice" || sess.Token != "ghu_token" || len(sess.CSRF) != 32 {
		t.Fatalf("read back: %+v %v", sess, ok)
	}
	other, _ := newSessions("another-secret", true, clock)
	if _, ok := other.read(req(c.Value)); ok {
		t.Error("a server with another secret opened the session")
	}
	now = now.Add(sessionTTL)
	if _, ok := s.read(req(c.Value)); ok {
		t.Error("an expired session still opens")
	}
	if _, err := newSessions("", false, clock); err == nil {
		t.Error("sessions without a secret")
	}
}

// routedUI is a UI with its routes and nothing else: what returnPath reads.
func routedUI() *UI {
	u := &UI{mux: http.NewServeMux()}
	u.routes()
	return u
}

// A login link's next, as an attacker writes it, comes back as a page of
// the UI or as "/": never as a string a browser reads as another origin
// (the WHATWG URL parser drops tabs and newlines, strips leading spaces
// and controls, and takes "\" for "/").
func TestReturnPath(t *testing.T) {
	u := routedUI()
	for _, tc := range []struct{ next, want string }{
		{"", "/"},
		{"/", "/"},
		{"/queue", "/queue"},
		{"/repos/a/b?x=1", "/repos/a/b?x=1"},
		{"/repos/acme/infra/layers/a%2Fb", "/repos/acme/infra/layers/a%2Fb"},
		{"/runs/12?key=k%2Fv&b=2", "/runs/12?b=2&key=k%2Fv"},
		{"/repos/a/b?x=<script>", "/repos/a/b?x=%3Cscript%3E"},
		{"/repos/%5Cevil.example/x", "/repos/%5Cevil.example/x"},
		{"//evil.example/", "/"},
		{"///evil.example/", "/"},
		{"/\\evil.example", "/"},
		{"/%5Cevil.example", "/"},
		{"\\/evil.example", "/"},
		{"/\t/evil.example", "/"},
		{"/\n/evil.example", "/"},
		{"/\r/evil.example", "/"},
		{"\t//evil.example", "/"},
		{" //evil.example", "/"},
		{"\x00//evil.example", "/"},
		{"/\x00/evil.example", "/"},
		{"/.//evil.example", "/"},
		{"/./evil.example", "/"},
		{"/%2F/evil.example", "/"},
		{"/%2e%2e//evil.example", "/"},
		{"/queue/../\\evil.example", "/"},
		{"https://evil.example", "/"},
		{"https:evil.example", "/"},
		{"https:/evil.example", "/"},
		{"HTTPS://evil.example", "/"},
		{"javascript:alert(1)", "/"},
		{"//user@evil.example/queue", "/"},
		{"queue", "/"},
		{"/static/style.css", "/static/style.css"},
		{"/repos/a/b/layers/n/unlock", "/"},
		{"/nothing/here", "/"},
	} {
		if got := u.returnPath(tc.next); got != tc.want {
			t.Errorf("returnPath(%q) = %q, want %q", tc.next, got, tc.want)
		}
	}
}

func TestStateStoreBindsTheStateToTheBrowser(t *testing.T) {
	ss := &stateStore{back: routedUI().returnPath}
	rec := httptest.NewRecorder()
	state, err := ss.GenerateState(rec, httptest.NewRequest(http.MethodGet, "/api/github/auth?next=/queue", nil))
	if err != nil {
		t.Fatal(err)
	}
	back := httptest.NewRequest(http.MethodGet, "/api/github/auth?code=c&state="+state, nil)
	for _, c := range rec.Result().Cookies() {
		back.AddCookie(c)
	}
	if ok, _ := ss.VerifyState(back, state); !ok {
		t.Error("the browser's own state was refused")
	}
	if ok, _ := ss.VerifyState(back, state+"0"); ok {
		t.Error("another state was accepted")
	}
	if ok, _ := ss.VerifyState(httptest.NewRequest(http.MethodGet, "/", nil), state); ok {
		t.Error("a browser without the cookie was accepted")
	}
	if got := nextOf(back); got != "/queue" {
		t.Errorf("nextOf = %q, want /queue", got)
	}
}
