package soak

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// ui is a user logged in to the web UI of one replica, following run logs
// over Server-Sent Events as the run page does.
type ui struct {
	c    *http.Client
	base string

	mu      sync.Mutex
	open    int
	wg      sync.WaitGroup
	results map[string]int // done, or what ended a stream otherwise
}

// maxStreams stays under the server's 8 streams per user.
const maxStreams = 4

var hiddenField = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)"`)

// login signs login in through GitHub's web flow as the fake serves it
// (e2e's uiLogin): Strata's login route, the fake's sign-in form, the
// redirect back with the code, Strata's session cookie.
func login(t *testing.T, base, user string) *ui {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Jar: jar, Timeout: time.Minute}
	res, err := c.Get(base + "/api/github/auth")
	if err != nil {
		t.Fatal(err)
	}
	body := readAll(t, res)
	if !strings.Contains(body, `id="authorize"`) {
		t.Fatalf("login did not reach GitHub's sign-in page (%s): %.300s", res.Request.URL, body)
	}
	form := url.Values{"login": {user}}
	for _, m := range hiddenField.FindAllStringSubmatch(body, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	signIn := *res.Request.URL
	signIn.RawQuery = ""
	if res, err = c.PostForm(signIn.String(), form); err != nil {
		t.Fatal(err)
	}
	if page := readAll(t, res); res.StatusCode != http.StatusOK || !strings.Contains(page, `id="repos"`) {
		t.Fatalf("after signing in as %s: %d at %s: %.500s", user, res.StatusCode, res.Request.URL, page)
	}
	c.Timeout = 0 // streams last as long as their run
	return &ui{c: c, base: base, results: map[string]int{}}
}

func readAll(t *testing.T, res *http.Response) string {
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// follow opens the event stream of run, in the background, unless
// maxStreams are open; it reads until the done event.
func (u *ui) follow(run int64) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.open >= maxStreams {
		return false
	}
	u.open++
	u.wg.Add(1)
	go func() {
		defer u.wg.Done()
		end := u.read(run)
		u.mu.Lock()
		defer u.mu.Unlock()
		u.open--
		u.results[end]++
	}()
	return true
}

// read follows one stream; a run's log ends within minutes even when its
// replica died (the run is recovered and reported), so a stream still open
// after 10 minutes is an error.
func (u *ui) read(run int64) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, fmt.Sprintf("%s/runs/%d/events", u.base, run), nil)
	if err != nil {
		return err.Error()
	}
	res, err := u.c.Do(req)
	if err != nil {
		return "error: " + err.Error()
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Sprintf("answered %d", res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		if sc.Text() == "event: done" {
			return "done"
		}
	}
	if err := sc.Err(); err != nil {
		return "error: " + err.Error()
	}
	return "ended without done"
}

// wait waits for the open streams to end and returns how they ended.
func (u *ui) wait() map[string]int {
	u.wg.Wait()
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.results
}
