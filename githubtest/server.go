package githubtest

import (
	"bytes"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
)

// Violation is a request GitHub would have refused.
type Violation struct {
	Method, Path string
	Err          string
}

// Request is one request the fake received. Path is relative to the server
// (it keeps the /api/v3 prefix) and has no query.
type Request struct {
	Method, Path, Query string
	// UserAgent is the client's name, which GitHub asks every client to send.
	UserAgent string
}

// Server is a fake GitHub. Its state is guarded by one mutex, held both by
// request handlers and by the test-facing methods.
type Server struct {
	t    testing.TB
	http *httptest.Server
	spec *restSpec

	appID          int64
	appSlug        string
	key            *rsa.PrivateKey
	keyPEM         []byte
	installationID int64
	started        time.Time

	mu         sync.Mutex
	nextID     int64
	users      map[string]int64
	repos      map[string]*Repo
	objects    map[string]object
	tokens     map[string]time.Time
	manifests  map[string]bool
	violations []Violation
	requests   []Request
	tarballs   map[string]int
	handlers   map[string]handlerFunc
	faults     []fault          // faults.go
	failed     []Request        // faults.go
	holds      []*Hold          // hold.go
	rate       rateWindow       // ratelimit.go
	hourly     int              // ratelimit.go: the installation's limit, 5000 when 0
	exhaust    []exhaustion     // ratelimit.go
	limited    []Request        // ratelimit.go
	clock      func() time.Time // ratelimit.go
	oauth      oauthState       // oauth.go
	teams      map[string]*team // teams.go, by "org/slug" in lower case
}

// NewServer starts a fake GitHub, closed when the test ends. Loading GitHub's
// API description takes seconds the first time in a test binary.
func NewServer(t testing.TB) *Server {
	t.Helper()
	spec, err := loadRESTSpec()
	if err != nil {
		t.Fatalf("githubtest: %v", err)
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatalf("githubtest: generate app key: %v", err)
	}
	s := &Server{
		t:              t,
		spec:           spec,
		appID:          424242,
		appSlug:        "strata-test",
		key:            key,
		keyPEM:         pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		installationID: 5151,
		started:        now(),
		nextID:         1000,
		users:          map[string]int64{},
		repos:          map[string]*Repo{},
		objects:        map[string]object{},
		tokens:         map[string]time.Time{},
		manifests:      map[string]bool{},
		tarballs:       map[string]int{},
		oauth:          newOAuthState(),
		teams:          map[string]*team{},
		clock:          time.Now,
	}
	s.rate.reset = s.started.Add(time.Hour)
	s.handlers = s.routes()
	s.http = httptest.NewServer(http.HandlerFunc(s.serveHTTP))
	t.Cleanup(s.http.Close)
	return s
}

// URL is the server's root, without a trailing slash.
func (s *Server) URL() string { return s.http.URL }

// APIURL is the REST base, GitHub Enterprise style: URL()+"/api/v3/".
func (s *Server) APIURL() string { return s.http.URL + "/api/v3/" }

// GraphQLURL is the GraphQL endpoint.
func (s *Server) GraphQLURL() string { return s.http.URL + "/api/graphql" }

// WebURL is the web base that html_url fields point to.
func (s *Server) WebURL() string { return s.http.URL + "/" }

// AppID is the ID of the fake's GitHub App.
func (s *Server) AppID() int64 { return s.appID }

// AppSlug is the App's slug; its bot user is AppSlug()+"[bot]".
func (s *Server) AppSlug() string { return s.appSlug }

// BotLogin is the login of the App's bot user.
func (s *Server) BotLogin() string { return s.appSlug + "[bot]" }

// PrivateKeyPEM is the App's private key, PKCS#1 PEM.
func (s *Server) PrivateKeyPEM() []byte { return append([]byte(nil), s.keyPEM...) }

// InstallationID is the App's one installation, on every repository.
func (s *Server) InstallationID() int64 { return s.installationID }

// Violations returns the requests refused because GitHub would refuse them.
func (s *Server) Violations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Violation(nil), s.violations...)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// WaitFor polls cond every 10ms until it is true, or fails t after timeout.
func (s *Server) WaitFor(t testing.TB, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("githubtest: condition not met within %v", timeout)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func now() time.Time { return time.Now().UTC().Truncate(time.Second) }

// id returns a fresh id for any object. Callers hold s.mu.
func (s *Server) id() int64 { s.nextID++; return s.nextID }

// call is one REST request being served.
type call struct {
	s      *Server
	w      http.ResponseWriter
	r      *http.Request
	route  string
	params map[string]string
	body   map[string]any
	repo   *Repo
}

type handlerFunc func(c *call)

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	req := Request{Method: r.Method, Path: r.URL.Path, Query: r.URL.RawQuery, UserAgent: r.UserAgent()}
	s.requests = append(s.requests, req)
	w.Header().Set("X-GitHub-Media-Type", "github.v3; format=json")
	over := s.countRequest(w.Header(), r)
	if over {
		s.limited = append(s.limited, req)
	}
	s.mu.Unlock()
	if over {
		s.refuseOverLimit(w)
		return
	}
	if s.injectFault(w, r) {
		return
	}
	s.waitHold(r)

	switch p := r.URL.Path; {
	case strings.HasPrefix(p, "/api/v3/"):
		s.serveREST(w, r, strings.TrimPrefix(p, "/api/v3"))
	case p == "/api/graphql":
		s.serveGraphQL(w, r)
	case strings.HasPrefix(p, codeloadPrefix):
		s.serveTarball(w, r)
	case isWebPath(p):
		s.serveWeb(w, r)
	default:
		s.violation(r.Method, p, "not a GitHub API path (REST is under /api/v3/)")
		writeJSON(w, http.StatusNotFound, ghError("Not Found"))
	}
}

func (s *Server) serveREST(w http.ResponseWriter, r *http.Request, path string) {
	raw, _ := io.ReadAll(r.Body)
	route, params, err := s.spec.route(r.Method, path)
	if err != nil {
		s.violation(r.Method, r.URL.Path, err.Error())
		writeJSON(w, http.StatusNotFound, ghError("Not Found"))
		return
	}
	if !s.authorized(w, r, route.Path) {
		return
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = nil // ghinstallation sends null when it asks for no token options; GitHub accepts it
	}
	var body map[string]any
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := json.Unmarshal(raw, &body); err != nil {
			s.violation(r.Method, r.URL.Path, "body is not a JSON object: "+err.Error())
			writeJSON(w, http.StatusBadRequest, ghError("Problems parsing JSON"))
			return
		}
	}
	if err := s.spec.validate(r, route, params, raw); err != nil {
		msg := firstLine(err.Error())
		s.violation(r.Method, r.URL.Path, msg)
		status := http.StatusUnprocessableEntity
		var re *openapi3filter.RequestError
		if errors.As(err, &re) && re.Parameter != nil && re.Parameter.In == "path" {
			status = http.StatusNotFound
		}
		writeJSON(w, status, map[string]any{"message": "Invalid request.\n\n" + msg,
			"documentation_url": "https://docs.github.com/rest"})
		return
	}
	if errs := checkLimits(route.Path, body); len(errs) > 0 {
		s.violation(r.Method, r.URL.Path, fmt.Sprintf("%s %s", errs[0].Field, errs[0].Message))
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"message": "Validation Failed",
			"errors": errs, "documentation_url": "https://docs.github.com/rest"})
		return
	}
	h, ok := s.handlers[r.Method+" "+route.Path]
	if !ok {
		s.t.Errorf("githubtest: %s %s: valid on GitHub but not implemented by the fake", r.Method, r.URL.Path)
		writeJSON(w, http.StatusNotImplemented, ghError("Not implemented by githubtest"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &call{s: s, w: w, r: r, route: route.Path, params: params, body: body}
	if owner, name := params["owner"], params["repo"]; owner != "" && name != "" {
		c.repo = s.repos[strings.ToLower(owner+"/"+name)]
		if c.repo == nil {
			c.fail(http.StatusNotFound, "Not Found")
			return
		}
	}
	h(c)
}

// violation records a request GitHub would refuse and fails the test.
func (s *Server) violation(method, path, msg string) {
	s.t.Errorf("githubtest: GitHub would refuse %s %s: %s", method, path, msg)
	s.mu.Lock()
	s.violations = append(s.violations, Violation{Method: method, Path: path, Err: msg})
	s.mu.Unlock()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func ghError(msg string) map[string]any {
	return map[string]any{"message": msg, "documentation_url": "https://docs.github.com/rest"}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (c *call) json(status int, v any) { writeJSON(c.w, status, v) }

func (c *call) fail(status int, msg string) { writeJSON(c.w, status, ghError(msg)) }

// invalid answers GitHub's 422 for a request the fake's state refuses.
func (c *call) invalid(msg string) { c.fail(http.StatusUnprocessableEntity, msg) }

func (c *call) str(key string) string { v, _ := c.body[key].(string); return v }

func (c *call) intParam(name string) int64 {
	n, _ := strconv.ParseInt(c.params[name], 10, 64)
	return n
}

func (c *call) query(name string) string { return c.r.URL.Query().Get(name) }

// page answers one page of items.
func (c *call) page(items []any) { c.json(http.StatusOK, c.paginate(items)) }

// paginate returns the page of items that per_page and page ask for, and
// sets GitHub's Link header.
func (c *call) paginate(items []any) []any {
	perPage, _ := strconv.Atoi(c.query("per_page"))
	if perPage <= 0 {
		perPage = 30
	}
	perPage = min(perPage, 100)
	pg, _ := strconv.Atoi(c.query("page"))
	pg = max(pg, 1)
	last := max((len(items)+perPage-1)/perPage, 1)
	from, to := min((pg-1)*perPage, len(items)), min(pg*perPage, len(items))
	link := func(n int, rel string) string {
		u := *c.r.URL
		u.Scheme, u.Host = "http", c.r.Host
		q := u.Query()
		q.Set("page", strconv.Itoa(n))
		q.Set("per_page", strconv.Itoa(perPage))
		u.RawQuery = q.Encode()
		return fmt.Sprintf("<%s>; rel=%q", u.String(), rel)
	}
	var links []string
	if pg < last {
		links = append(links, link(pg+1, "next"), link(last, "last"))
	}
	if pg > 1 {
		links = append(links, link(1, "first"), link(pg-1, "prev"))
	}
	if len(links) > 0 {
		c.w.Header().Set("Link", strings.Join(links, ", "))
	}
	return items[from:to]
}
