// Package ghretry is GitHub client middleware that survives GitHub: it
// waits out primary and secondary rate limits, retries transient server and
// network errors of idempotent requests with backoff, and never sends a
// create twice unless GitHub refused it without performing it.
package ghretry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strata.dev/strata/words"
	"sync"
	"time"
)

// Options tune a Transport; zero values take the defaults.
type Options struct {
	// MaxWait bounds the time one request waits for rate limits (default
	// 15m). A limit that lasts longer, or past the request context's
	// deadline, fails the request at once with a *LimitError.
	MaxWait time.Duration
	// Retries bounds the retries of an idempotent request after server or
	// network errors (default 3).
	Retries int
	// Backoff is the ceiling of the first wait after a server or network
	// error (default 1s); it doubles each retry up to MaxBackoff (default
	// 30s), and each wait is drawn at random below it (full jitter), so
	// clients that failed together do not retry together.
	Backoff, MaxBackoff time.Duration
	// AttemptTimeout bounds one attempt, up to the end of reading its body
	// (default 60s). It takes the place of http.Client.Timeout, which would
	// also cut rate-limit waits short.
	AttemptTimeout time.Duration
	// OnRetry, when set, is told of every retry before its wait.
	OnRetry func(req *http.Request, reason Reason, wait time.Duration)
	// Now and Sleep are the clock; tests replace them. Sleep returns
	// ctx.Err() when ctx ends first.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// untoldLimitWait is the wait of a secondary limit that does not say how
// long: GitHub asks for at least a minute.
const untoldLimitWait = time.Minute

// maxLimitRetries stops a request that GitHub keeps refusing with tiny
// waits; MaxWait stops the ones with long waits.
const maxLimitRetries = 10

// Transport is the middleware around one GitHub client.
type Transport struct {
	next   http.RoundTripper
	opts   Options
	jitter func(ceiling time.Duration) time.Duration

	mu    sync.Mutex
	pause pause
}

// pause is when GitHub takes this client's requests again after a rate
// limit. No request is sent before: GitHub may ban an integration that
// keeps sending while limited.
type pause struct {
	until   time.Time
	reason  Reason
	message string
}

// Middleware returns go-githubapp client middleware. go-githubapp applies
// middleware once per client, and caches one client per installation, so
// each installation waits for its own limits, as GitHub counts them.
func Middleware(opts Options) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper { return New(next, opts) }
}

// New wraps next.
func New(next http.RoundTripper, opts Options) *Transport {
	if opts.MaxWait <= 0 {
		opts.MaxWait = 15 * time.Minute
	}
	if opts.Retries <= 0 {
		opts.Retries = 3
	}
	if opts.Backoff <= 0 {
		opts.Backoff = time.Second
	}
	if opts.MaxBackoff <= 0 {
		opts.MaxBackoff = 30 * time.Second
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = 60 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	return &Transport{next: next, opts: opts, jitter: FullJitter}
}

// LimitError fails a request that a rate limit would keep waiting longer
// than it may.
type LimitError struct {
	Reason Reason
	// Until is when GitHub takes requests again.
	Until time.Time
	// Allowed is what the request could still wait: what is left of
	// MaxWait, or of its context.
	Allowed time.Duration
	// Message is GitHub's, when it gave one.
	Message string
}

func (e *LimitError) Error() string {
	what := "secondary rate limit"
	if e.Reason == PrimaryRateLimit {
		what = "rate limit"
	}
	s := fmt.Sprintf("GitHub's %s lasts until %s, longer than this request may wait (%v)",
		what, e.Until.UTC().Format(time.RFC3339), words.Duration(e.Allowed))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// RoundTrip sends req until GitHub answers for good.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	waitEnd := t.opts.Now().Add(t.opts.MaxWait)
	limitRetries, errorRetries := 0, 0
	for attempt := 0; ; attempt++ {
		if err := t.awaitPause(ctx, waitEnd); err != nil {
			if attempt == 0 && req.Body != nil {
				req.Body.Close() // a RoundTripper closes the body, sent or not
			}
			return nil, err
		}
		res, err := t.send(req, attempt)
		now := t.opts.Now()
		if until, ok := exhausted(res); ok {
			t.pauseUntil(pause{until: until, reason: PrimaryRateLimit})
		}
		v := judge(res, err, now)
		switch v.reason {
		case "":
			return t.holdExhausted(ctx, res, waitEnd), nil
		case SecondaryRateLimit, PrimaryRateLimit:
			// GitHub performs no request it refuses for a rate limit, so
			// even a create may be sent again.
			wait := v.wait
			if !v.told {
				// Then more, as GitHub asks of a client it refused again.
				wait = untoldLimitWait << min(limitRetries, 4)
			}
			p := pause{until: now.Add(wait), reason: v.reason, message: v.message}
			t.pauseUntil(p)
			if limitRetries >= maxLimitRetries || !replayable(req) {
				return res, nil
			}
			if allowed := allowedWait(ctx, now, waitEnd); p.until.Sub(now) > allowed {
				discard(res)
				return nil, &LimitError{Reason: p.reason, Until: p.until, Allowed: allowed, Message: p.message}
			}
			limitRetries++
			discard(res)
			t.retrying(req, v.reason, wait)
			// The wait is the pause, at the top of the loop.
		case ServerError, NetworkError:
			// A create that GitHub may have performed is never sent again:
			// the caller decides, knowing it failed.
			if errorRetries >= t.opts.Retries || !idempotent(req.Method) || !replayable(req) || ctx.Err() != nil {
				return res, err
			}
			wait := max(t.jitter(t.backoffCeiling(errorRetries)), v.wait)
			if wait > allowedWait(ctx, now, waitEnd) {
				return res, err
			}
			errorRetries++
			discard(res)
			t.retrying(req, v.reason, wait)
			if err := t.opts.Sleep(ctx, wait); err != nil {
				return nil, err
			}
		}
	}
}

// send makes one attempt, with its own timeout that ends when the caller
// closes the body. Attempts after the first send a fresh copy of the body.
func (t *Transport) send(req *http.Request, attempt int) (*http.Response, error) {
	actx, cancel := context.WithTimeout(req.Context(), t.opts.AttemptTimeout)
	areq := req.Clone(actx)
	if attempt > 0 && req.GetBody != nil {
		body, err := req.GetBody()
		if err != nil {
			cancel()
			return nil, fmt.Errorf("replay request body: %w", err)
		}
		areq.Body = body
	}
	res, err := t.next.RoundTrip(areq)
	if err != nil {
		cancel()
		if req.Context().Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %s: %w", words.Duration(t.opts.AttemptTimeout), err)
		}
		return nil, err
	}
	res.Body = &cancelOnClose{ReadCloser: res.Body, cancel: cancel}
	return res, nil
}

// holdExhausted returns an answer that used up the primary limit only once
// the limit has reset, when that is soon enough. go-github remembers the
// exhausted limit and refuses further requests itself, before they reach
// this middleware, until the reset; holding the answer keeps its memory
// harmless. The body is read first, since the attempt's timeout runs on.
func (t *Transport) holdExhausted(ctx context.Context, res *http.Response, waitEnd time.Time) *http.Response {
	until, ok := exhausted(res)
	now := t.opts.Now()
	if !ok || !until.After(now) || until.Sub(now) > allowedWait(ctx, now, waitEnd) {
		return res
	}
	body, err := io.ReadAll(res.Body)
	res.Body.Close()
	res.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
	// A cancelled wait still returns the answer: the request happened.
	_ = t.opts.Sleep(ctx, until.Sub(now))
	return res
}

// awaitPause waits while this client's requests are paused for a rate
// limit, or fails at once when the pause outlasts what the request may wait.
func (t *Transport) awaitPause(ctx context.Context, waitEnd time.Time) error {
	t.mu.Lock()
	p := t.pause
	t.mu.Unlock()
	now := t.opts.Now()
	wait := p.until.Sub(now)
	if wait <= 0 {
		return nil
	}
	if allowed := allowedWait(ctx, now, waitEnd); wait > allowed {
		return &LimitError{Reason: p.reason, Until: p.until, Allowed: allowed, Message: p.message}
	}
	return t.opts.Sleep(ctx, wait)
}

// pauseUntil pauses the client's requests, never shortening a pause.
func (t *Transport) pauseUntil(p pause) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if p.until.After(t.pause.until) {
		t.pause = p
	}
}

// backoffCeiling is Backoff doubled n times, at most MaxBackoff.
func (t *Transport) backoffCeiling(n int) time.Duration {
	return Ceiling(t.opts.Backoff, t.opts.MaxBackoff, n)
}

// Ceiling is first doubled n times, at most limit: the most an exponential
// backoff waits before its retry n+1.
func Ceiling(first, limit time.Duration, n int) time.Duration {
	d := first
	for ; n > 0 && d < limit; n-- {
		d *= 2
	}
	return min(d, limit)
}

func (t *Transport) retrying(req *http.Request, reason Reason, wait time.Duration) {
	if t.opts.OnRetry != nil {
		t.opts.OnRetry(req, reason, wait)
	}
}

// allowedWait is how long a request may still wait: until waitEnd, and
// until its context's deadline (on the real clock, as contexts are).
func allowedWait(ctx context.Context, now, waitEnd time.Time) time.Duration {
	allowed := waitEnd.Sub(now)
	if d, ok := ctx.Deadline(); ok {
		allowed = min(allowed, time.Until(d))
	}
	return max(allowed, 0)
}

// idempotent methods leave the same state however often they are
// performed. PATCH is, as Strata uses it: it sets fields of an existing
// check run, comment or ref to given values (a ref moved to the SHA it
// already has is a fast-forward). POST creates, so it is not.
func idempotent(method string) bool {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodPut, http.MethodDelete, http.MethodPatch:
		return true
	}
	return false
}

// replayable reports whether req's body can be sent again.
func replayable(req *http.Request) bool {
	return req.Body == nil || req.Body == http.NoBody || req.GetBody != nil
}

// discard drops an answer that is retried, letting its connection be reused.
func discard(res *http.Response) {
	if res == nil || res.Body == nil {
		return
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 64<<10))
	res.Body.Close()
}

// FullJitter is a wait drawn at random from 0 up to ceiling ("full jitter"),
// so that clients that failed together do not retry together. Strata's one
// backoff: GitHub requests here, the hydration's compare-and-swap commits in
// gitcommit.
func FullJitter(ceiling time.Duration) time.Duration {
	if ceiling <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(ceiling) + 1))
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// cancelOnClose ends an attempt's context when its body is closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return 0, io.EOF
}
