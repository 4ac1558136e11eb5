// Package browsertest drives a headless Chromium (Debian's chromium, which
// scripts/test installs) with chromedp, for tests of the web UI as a person
// sees it: real navigation, cookies, forms, Content-Security-Policy and the
// page's script.
//
//	b := browsertest.Start(t)   // one Chromium for the test, closed at cleanup
//	tab := b.NewTab()           // a browser context of its own: its own cookies
//	tab.Do(chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#repos")))
//	text := browsertest.Run(tab, chromedp.Text(chromedp.CSS("h1")))
//
// A tab fails its test when its page throws, calls console.error, or has
// the browser log an error (a script or style the Content-Security-Policy
// refused, a static file that did not load): a UI that works only without
// its policy, or whose script breaks, does not pass.
package browsertest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"strata.dev/strata/tooltest"
)

// BinEnv names the Chromium to use; else chromium on PATH.
const BinEnv = "STRATA_CHROMIUM_BIN"

// Timeout bounds one Tab.Do or Run: a page that never shows what the test
// waits for fails the test in this time, not at go test's deadline.
const Timeout = 90 * time.Second

// Bin returns the Chromium binary: $STRATA_CHROMIUM_BIN, else chromium on
// PATH. Without one the test skips, or fails when tools are required.
func Bin(t testing.TB) string {
	t.Helper()
	if b := os.Getenv(BinEnv); b != "" {
		if _, err := os.Stat(b); err != nil {
			tooltest.Missing(t, "chromium at $"+BinEnv, err)
		}
		return b
	}
	b, err := exec.LookPath("chromium")
	if err != nil {
		tooltest.Missing(t, "chromium on PATH (apt-get install chromium)", err)
	}
	return b
}

// Browser is one Chromium process for a test.
type Browser struct {
	t   testing.TB
	ctx context.Context
}

// Start starts Chromium, headless, with a fresh profile; it stops when the
// test ends.
func Start(t testing.TB) *Browser {
	t.Helper()
	bin := Bin(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Headless,
		chromedp.NoSandbox, // the tests run as root, where Chromium's sandbox refuses to start
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("password-store", "basic"),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 900),
	}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithErrorf(t.Logf))
	t.Cleanup(func() { cancel(); cancelAlloc() })
	// The first Do binds the browser's life to ctx: no timeout on it, the
	// test's cleanup ends it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium (%s): %v", bin, err)
	}
	return &Browser{t: t, ctx: ctx}
}

// NewTab opens a tab in a new browser context: its cookies are its own, as
// another person's browser. It closes when the test ends.
func (b *Browser) NewTab() *Tab {
	b.t.Helper()
	tab := &Tab{t: b.t}
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext(), chromedp.WithListener(tab.listen))
	tab.ctx = ctx
	b.t.Cleanup(func() {
		if fresh := tab.fresh(); len(fresh) > 0 {
			b.t.Errorf("the page went wrong:\n%s", strings.Join(fresh, "\n"))
		}
		cancel()
	})
	if err := chromedp.Do(ctx); err != nil {
		b.t.Fatalf("open a tab: %v", err)
	}
	return tab
}

// Tab is a browser tab, recording what went wrong on its pages.
type Tab struct {
	t   testing.TB
	ctx context.Context

	mu       sync.Mutex
	problems []string
	reported int // problems already failed on
}

// Context is the tab's chromedp context, for chromedp.Run and Call.
func (p *Tab) Context() context.Context { return p.ctx }

// listen records, from the browser's events, a page's exceptions, its
// console.error calls, and the errors the browser logs about it (a
// Content-Security-Policy violation, a resource that did not load). It
// runs in chromedp's read loop: it only records.
func (p *Tab) listen(ev any) {
	var problem string
	switch ev := ev.(type) {
	case *runtime.EventExceptionThrown:
		d := ev.ExceptionDetails
		problem = "uncaught exception: " + d.Text
		if d.Exception != nil && d.Exception.Description != "" {
			problem += " " + d.Exception.Description
		}
		problem += fmt.Sprintf(" (%s:%d)", d.URL, d.LineNumber+1)
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeAssert {
			return
		}
		var args []string
		for _, a := range ev.Args {
			switch {
			case len(a.Value) > 0:
				args = append(args, string(a.Value))
			default:
				args = append(args, a.Description)
			}
		}
		problem = "console." + string(ev.Type) + ": " + strings.Join(args, " ")
	case *log.EventEntryAdded:
		e := ev.Entry
		if e.Level != log.EntryLevelError || p.expectedStatus(e) {
			return
		}
		problem = fmt.Sprintf("browser log (%s): %s %s", e.Source, e.Text, e.URL)
	default:
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.problems = append(p.problems, problem)
}

// expectedStatus is the browser's note that a page came with an error
// status (a 403 refusal, a 404 for what the viewer may not see): the test
// asserts the page, and the status is the server's answer, not a fault of
// the page. Only pages: a static file that fails to load is a fault.
func (p *Tab) expectedStatus(e *log.Entry) bool {
	return e.Source == log.EntrySourceNetwork && strings.HasPrefix(e.Text, "Failed to load resource: the server responded with a status of ") &&
		!strings.Contains(e.URL, "/static/")
}

// fresh returns the problems not yet reported, and counts them reported.
func (p *Tab) fresh() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	fresh := p.problems[p.reported:]
	p.reported = len(p.problems)
	return fresh
}

// check fails the test on problems not yet reported.
func (p *Tab) check() {
	p.t.Helper()
	if fresh := p.fresh(); len(fresh) > 0 {
		p.t.Fatalf("the page went wrong:\n%s", strings.Join(fresh, "\n"))
	}
}

// Do runs the actions, each in turn, within Timeout; it fails the test on
// an error, or when the page went wrong meanwhile.
func (p *Tab) Do(actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	err := chromedp.Do(ctx, actions...)
	p.check()
	if err != nil {
		p.t.Fatalf("browser: %v%s", err, p.where())
	}
}

// Run runs one action that returns a value, as Tab.Do does.
func Run[T any](p *Tab, a chromedp.Action[T]) T {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	p.check()
	if err != nil {
		p.t.Fatalf("browser: %v%s", err, p.where())
	}
	return v
}

// where says which page the tab is on and what it shows, for a failure:
// "timed out waiting for #repos" alone does not say what came instead.
func (p *Tab) where() string {
	ctx, cancel := context.WithTimeout(p.ctx, 5*time.Second)
	defer cancel()
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		return ""
	}
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		text = "(" + err.Error() + ")"
	}
	if len(text) > 2000 {
		text = text[:2000] + "…"
	}
	return "\non " + loc + ":\n" + text
}

// Until waits until the JavaScript expression cond holds on the tab's
// page, as a person watching it would, within Timeout. (chromedp.Poll
// compiles its predicate with new Function, which a Content-Security-Policy
// without 'unsafe-eval' refuses; an expression the debugger evaluates is
// not the page's eval.)
func (p *Tab) Until(what, cond string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, Timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](cond))
		p.check()
		if err == nil && ok {
			return
		}
		select {
		case <-ctx.Done():
			p.t.Fatalf("browser: no %s within %s (%s: %v, %v)%s", what, Timeout, cond, ok, err, p.where())
		case <-tick.C:
		}
	}
}

// Text is the visible text of the first element sel matches.
func (p *Tab) Text(sel string) string {
	p.t.Helper()
	return Run(p, chromedp.Text(chromedp.CSS(sel)))
}

// Count is how many elements sel matches now.
func (p *Tab) Count(sel string) int {
	p.t.Helper()
	return Run(p, chromedp.Evaluate[int](fmt.Sprintf(`document.querySelectorAll(%q).length`, sel)))
}

// Location is the tab's URL.
func (p *Tab) Location() string {
	p.t.Helper()
	return Run(p, chromedp.Location())
}
