package ghretry

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// answer is one scripted reply of the fake GitHub below the middleware.
type answer struct {
	status int
	header map[string]string
	body   string
	err    error
}

// sent is one request that reached GitHub.
type sent struct{ method, body string }

// upstream answers from a script, then 200 {}, and records what it got.
type upstream struct {
	mu      sync.Mutex
	answers []answer
	got     []sent
	block   bool // hang until the request's context ends
}

func (u *upstream) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		body, _ = io.ReadAll(r.Body)
		r.Body.Close()
	}
	u.mu.Lock()
	u.got = append(u.got, sent{r.Method, string(body)})
	a := answer{status: 200, body: "{}"}
	if len(u.answers) > 0 {
		a, u.answers = u.answers[0], u.answers[1:]
	}
	block := u.block
	u.mu.Unlock()
	if block {
		<-r.Context().Done()
		return nil, r.Context().Err()
	}
	if a.err != nil {
		return nil, a.err
	}
	res := &http.Response{StatusCode: a.status, Header: http.Header{}, Request: r,
		Body: io.NopCloser(strings.NewReader(a.body))}
	for k, v := range a.header {
		res.Header.Set(k, v)
	}
	return res, nil
}

func (u *upstream) sent() []sent {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]sent(nil), u.got...)
}

// clock is a fake clock whose sleeps return at once and move it on.
type clock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

// start is when every test's clock starts.
var start = time.Unix(1_700_000_000, 0)

func newClock() *clock { return &clock{now: start} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	return nil
}

func (c *clock) sleeps() []time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Duration(nil), c.slept...)
}

// epoch is x-ratelimit-reset for after the start.
func epoch(after time.Duration) string { return strconv.FormatInt(start.Add(after).Unix(), 10) }

type retry struct {
	reason Reason
	wait   time.Duration
}

// harness is a Transport over a scripted GitHub, with a fake clock and
// jitter that always takes the ceiling, so waits are exact.
type harness struct {
	up      *upstream
	clock   *clock
	tr      *Transport
	retries []retry
}

func newHarness(opts Options, answers ...answer) *harness {
	h := &harness{up: &upstream{answers: answers}, clock: newClock()}
	opts.Now, opts.Sleep = h.clock.Now, h.clock.Sleep
	opts.OnRetry = func(_ *http.Request, r Reason, d time.Duration) { h.retries = append(h.retries, retry{r, d}) }
	h.tr = New(h.up, opts)
	h.tr.jitter = func(c time.Duration) time.Duration { return c }
	return h
}

// do sends a request the way go-github does (its body replayable).
func (h *harness) do(t *testing.T, ctx context.Context, method, body string) (*http.Response, string, error) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "https://api.github.com/repos/acme/infra/check-runs", rd)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.tr.RoundTrip(req)
	if err != nil {
		return nil, "", err
	}
	b, rerr := io.ReadAll(res.Body)
	res.Body.Close()
	if rerr != nil {
		t.Fatalf("read body: %v", rerr)
	}
	return res, string(b), nil
}

const secondaryBody = `{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before you try again.","documentation_url":"https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"}`

func secondary(status int, retryAfter string) answer {
	a := answer{status: status, body: secondaryBody, header: map[string]string{}}
	if retryAfter != "" {
		a.header["Retry-After"] = retryAfter
	}
	return a
}

func primary(resetIn time.Duration) answer {
	return answer{status: 403, body: `{"message":"API rate limit exceeded for installation ID 5151."}`, header: map[string]string{
		"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "0", "X-RateLimit-Used": "5000",
		"X-RateLimit-Reset": epoch(resetIn)}}
}

func created() answer { return answer{status: 201, body: `{"id":1}`} }

// A create refused by a secondary limit is sent again after Retry-After,
// with the same body, and performed once.
func TestSecondaryLimitRetriesCreate(t *testing.T) {
	for _, status := range []int{403, 429} {
		h := newHarness(Options{}, secondary(status, "30"), created())
		res, body, err := h.do(t, context.Background(), "POST", `{"name":"strata/plan: net"}`)
		if err != nil || res.StatusCode != 201 || body != `{"id":1}` {
			t.Fatalf("%d: got %v %q %v, want the 201", status, res, body, err)
		}
		got := h.up.sent()
		if len(got) != 2 || got[0] != got[1] || got[1].body != `{"name":"strata/plan: net"}` {
			t.Errorf("%d: sent %+v, want the same POST twice", status, got)
		}
		if s := h.clock.sleeps(); len(s) != 1 || s[0] != 30*time.Second {
			t.Errorf("%d: slept %v, want 30s", status, s)
		}
		if len(h.retries) != 1 || h.retries[0] != (retry{SecondaryRateLimit, 30 * time.Second}) {
			t.Errorf("%d: retries %+v", status, h.retries)
		}
	}
}

// A 403 that names a secondary limit but has no Retry-After waits a minute,
// as GitHub asks.
func TestSecondaryLimitWithoutRetryAfterWaitsAMinute(t *testing.T) {
	h := newHarness(Options{}, secondary(403, ""), created())
	if res, _, err := h.do(t, context.Background(), "POST", `{}`); err != nil || res.StatusCode != 201 {
		t.Fatalf("got %v %v", res, err)
	}
	if s := h.clock.sleeps(); len(s) != 1 || s[0] != time.Minute {
		t.Errorf("slept %v, want 1m", s)
	}
}

// Retry-After: 0 is taken at its word.
func TestRetryAfterZeroRetriesAtOnce(t *testing.T) {
	h := newHarness(Options{}, secondary(403, "0"), created())
	if res, _, err := h.do(t, context.Background(), "POST", `{}`); err != nil || res.StatusCode != 201 {
		t.Fatalf("got %v %v", res, err)
	}
	if len(h.clock.sleeps()) != 0 || len(h.retries) != 1 || h.retries[0].wait != 0 {
		t.Errorf("slept %v, retries %+v, want one retry at once", h.clock.sleeps(), h.retries)
	}
}

// An exhausted primary limit waits until x-ratelimit-reset, then retries.
func TestPrimaryLimitWaitsForReset(t *testing.T) {
	h := newHarness(Options{}, primary(90*time.Second))
	c := h.clock
	if res, _, err := h.do(t, context.Background(), "GET", ""); err != nil || res.StatusCode != 200 {
		t.Fatalf("got %v %v", res, err)
	}
	if s := c.sleeps(); len(s) != 1 || s[0] != 90*time.Second {
		t.Errorf("slept %v, want 90s", s)
	}
	if len(h.up.sent()) != 2 || h.retries[0].reason != PrimaryRateLimit {
		t.Errorf("sent %d, retries %+v", len(h.up.sent()), h.retries)
	}
}

// A limit beyond MaxWait fails clearly at once, and the next request fails
// without reaching GitHub until the reset.
func TestLimitBeyondMaxWaitFailsClearly(t *testing.T) {
	h := newHarness(Options{MaxWait: 15 * time.Minute}, primary(time.Hour))
	c := h.clock
	_, _, err := h.do(t, context.Background(), "GET", "")
	var le *LimitError
	if !errors.As(err, &le) || le.Reason != PrimaryRateLimit || !le.Until.Equal(c.Now().Add(time.Hour)) {
		t.Fatalf("err = %v, want a primary LimitError until the reset", err)
	}
	if !strings.Contains(err.Error(), "API rate limit exceeded for installation ID 5151") || !strings.Contains(err.Error(), "may wait (15m)") {
		t.Errorf("error does not say what and how long: %v", err)
	}
	if _, _, err := h.do(t, context.Background(), "POST", `{}`); !errors.As(err, &le) {
		t.Errorf("second request: %v, want a LimitError", err)
	}
	if n := len(h.up.sent()); n != 1 || len(c.sleeps()) != 0 {
		t.Errorf("sent %d requests and slept %v, want 1 and none", n, c.sleeps())
	}
}

// A wait that would outlast the request's context fails at once.
func TestLimitBeyondContextDeadlineFailsAtOnce(t *testing.T) {
	h := newHarness(Options{}, secondary(403, "60"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var le *LimitError
	if _, _, err := h.do(t, ctx, "GET", ""); !errors.As(err, &le) || le.Reason != SecondaryRateLimit {
		t.Fatalf("err = %v, want a secondary LimitError", err)
	}
	if len(h.clock.sleeps()) != 0 {
		t.Errorf("slept %v", h.clock.sleeps())
	}
}

// Cancelling the request ends a rate-limit wait (real clock).
func TestCancelEndsWait(t *testing.T) {
	up := &upstream{answers: []answer{secondary(403, "60")}}
	tr := New(up, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", "https://api.github.com/x", nil)
	start := time.Now()
	if _, err := tr.RoundTrip(req); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}

// A pause for a rate limit holds back the client's other requests, which
// wait before they are sent rather than be refused.
func TestPauseHoldsBackOtherRequests(t *testing.T) {
	h := newHarness(Options{}, secondary(403, "30"))
	// A body that cannot be replayed: its limit answer comes back as is,
	// but the client stays paused.
	req, _ := http.NewRequest("POST", "https://api.github.com/x", io.NopCloser(strings.NewReader("{}")))
	res, err := h.tr.RoundTrip(req)
	if err != nil || res.StatusCode != 403 {
		t.Fatalf("got %v %v, want the 403 back", res, err)
	}
	if res, _, err := h.do(t, context.Background(), "GET", ""); err != nil || res.StatusCode != 200 {
		t.Fatalf("got %v %v", res, err)
	}
	if s := h.clock.sleeps(); len(s) != 1 || s[0] != 30*time.Second {
		t.Errorf("slept %v, want 30s before the GET", s)
	}
}

// A successful answer that used up the limit comes back once it reset, so
// go-github, which remembers it, does not refuse the next request itself.
func TestAnswerThatExhaustsLimitIsHeldUntilReset(t *testing.T) {
	h := newHarness(Options{}, answer{status: 200, body: `{"ok":true}`, header: map[string]string{
		"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": epoch(10 * time.Second)}})
	c := h.clock
	res, body, err := h.do(t, context.Background(), "GET", "")
	if err != nil || res.StatusCode != 200 || body != `{"ok":true}` {
		t.Fatalf("got %v %q %v", res, body, err)
	}
	if s := c.sleeps(); len(s) != 1 || s[0] != 10*time.Second {
		t.Errorf("slept %v, want 10s", s)
	}
}

// 5xx on idempotent requests retry with growing backoff, a bounded number
// of times, replaying the body.
func TestServerErrorsRetryIdempotentRequests(t *testing.T) {
	h := newHarness(Options{}, answer{status: 502}, answer{status: 503}, answer{status: 500}, answer{status: 200, body: `{"id":7}`})
	res, body, err := h.do(t, context.Background(), "PATCH", `{"status":"completed"}`)
	if err != nil || res.StatusCode != 200 || body != `{"id":7}` {
		t.Fatalf("got %v %q %v", res, body, err)
	}
	for i, s := range h.up.sent() {
		if s.body != `{"status":"completed"}` {
			t.Errorf("attempt %d sent %q", i, s.body)
		}
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}
	if s := h.clock.sleeps(); len(s) != 3 || s[0] != want[0] || s[1] != want[1] || s[2] != want[2] {
		t.Errorf("slept %v, want %v", s, want)
	}

	h = newHarness(Options{}, answer{status: 500}, answer{status: 500}, answer{status: 500}, answer{status: 500}, answer{status: 200})
	if res, _, err := h.do(t, context.Background(), "GET", ""); err != nil || res.StatusCode != 500 {
		t.Fatalf("got %v %v, want the fourth 500", res, err)
	}
	if n := len(h.up.sent()); n != 4 {
		t.Errorf("sent %d, want 1 + 3 retries", n)
	}
}

// Backoff is drawn below a ceiling that doubles up to MaxBackoff.
func TestBackoffHasFullJitter(t *testing.T) {
	h := newHarness(Options{Retries: 80, Backoff: time.Second, MaxBackoff: 5 * time.Second},
		answer{status: 502}, answer{status: 502}, answer{status: 502}, answer{status: 502})
	var ceilings []time.Duration
	h.tr.jitter = func(c time.Duration) time.Duration { ceilings = append(ceilings, c); return c / 2 }
	h.do(t, context.Background(), "GET", "")
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 5 * time.Second}
	if len(ceilings) != 4 || ceilings[0] != want[0] || ceilings[1] != want[1] || ceilings[2] != want[2] || ceilings[3] != want[3] {
		t.Errorf("ceilings %v, want %v", ceilings, want)
	}
	if s := h.clock.sleeps(); s[0] != 500*time.Millisecond {
		t.Errorf("slept %v, want the jittered wait", s)
	}
	if c := h.tr.backoffCeiling(79); c != 5*time.Second {
		t.Errorf("ceiling after 79 retries = %v, want MaxBackoff", c)
	}
	for i := 0; i < 1000; i++ {
		if d := FullJitter(time.Second); d < 0 || d > time.Second {
			t.Fatalf("FullJitter(1s) = %v", d)
		}
	}
}

// A create that may have been performed (5xx, or no answer) is never sent
// again; the caller gets the failure.
func TestCreateIsNotRetriedAfterServerOrNetworkError(t *testing.T) {
	h := newHarness(Options{}, answer{status: 502, body: `{"message":"Bad Gateway"}`})
	if res, body, err := h.do(t, context.Background(), "POST", `{"body":"plan"}`); err != nil || res.StatusCode != 502 || !strings.Contains(body, "Bad Gateway") {
		t.Fatalf("got %v %q %v, want the 502", res, body, err)
	}
	h2 := newHarness(Options{}, answer{err: errors.New("connection reset by peer")})
	if _, _, err := h2.do(t, context.Background(), "POST", `{"body":"plan"}`); err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Fatalf("err = %v, want the network error", err)
	}
	if len(h.up.sent()) != 1 || len(h2.up.sent()) != 1 || len(h.retries)+len(h2.retries) != 0 {
		t.Errorf("sent %d and %d times, want once each", len(h.up.sent()), len(h2.up.sent()))
	}
}

// A GET without an answer is sent again.
func TestNetworkErrorRetriesGet(t *testing.T) {
	h := newHarness(Options{}, answer{err: errors.New("connection refused")})
	if res, _, err := h.do(t, context.Background(), "GET", ""); err != nil || res.StatusCode != 200 {
		t.Fatalf("got %v %v", res, err)
	}
	if len(h.retries) != 1 || h.retries[0].reason != NetworkError {
		t.Errorf("retries %+v", h.retries)
	}
}

// An attempt that hangs times out on its own, and a GET is tried again.
func TestAttemptTimeout(t *testing.T) {
	up := &upstream{block: true}
	tr := New(up, Options{AttemptTimeout: 20 * time.Millisecond, Retries: 1, Backoff: time.Millisecond})
	req, _ := http.NewRequest("GET", "https://api.github.com/x", nil)
	_, err := tr.RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), "no answer within 20ms") {
		t.Fatalf("err = %v", err)
	}
	if n := len(up.sent()); n != 2 {
		t.Errorf("sent %d, want 2", n)
	}
}

// Other refusals are GitHub's final word, their body intact.
func TestOtherAnswersAreFinal(t *testing.T) {
	for _, a := range []answer{
		{status: 403, body: `{"message":"Resource not accessible by integration"}`},
		{status: 404, body: `{"message":"Not Found"}`},
		{status: 422, body: `{"message":"Validation Failed"}`},
	} {
		h := newHarness(Options{}, a)
		res, body, err := h.do(t, context.Background(), "GET", "")
		if err != nil || res.StatusCode != a.status || body != a.body {
			t.Errorf("%d: got %v %q %v", a.status, res, body, err)
		}
		if len(h.up.sent()) != 1 {
			t.Errorf("%d: sent %d times", a.status, len(h.up.sent()))
		}
	}
}

func TestRetryAfterForms(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	for v, want := range map[string]time.Duration{
		"":  0,
		"7": 7 * time.Second,
		now.Add(90 * time.Second).UTC().Format(http.TimeFormat): 90 * time.Second,
		"soon": 0,
	} {
		if got := retryAfter(http.Header{"Retry-After": {v}}, now); got != want {
			t.Errorf("Retry-After %q = %v, want %v", v, got, want)
		}
	}
}
