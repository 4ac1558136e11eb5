package e2e

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/store"
)

// A stranger streams 256 MiB at the webhook endpoint, unsigned or with a
// made-up signature, declared or chunked. Each gets 413 once GitHub's 25 MB
// cap is passed, and the server stays up. An unsigned body is never
// buffered: the process allocates less than 8 MiB in all while it streams
// (runtime.MemStats.TotalAlloc, which no GC lowers, so it bounds the peak
// too). A body with a signature header must be kept whole to check it, so
// it costs at most what the cap lets in: less than 96 MiB, never 256.
//
// Not parallel: TotalAlloc counts the whole test process.
func TestHugeWebhooksAreRefusedWithBoundedMemory(t *testing.T) {
	env := apptest.Start(t, apptest.Options{Dialect: store.SQLite})
	cases := []struct {
		name    string
		chunked bool
		header  string
		maxHeap uint64
	}{
		{"unsigned, declared", false, "", 8 << 20},
		{"unsigned, chunked", true, "", 8 << 20},
		{"made-up signature, chunked", true, "X-Hub-Signature-256: sha256=" + strings.Repeat("0", 64) + "\r\n", 96 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			code, body := streamBody(t, env.Server.Addr(), c.header, 256<<20, c.chunked)
			runtime.ReadMemStats(&after)
			grew := after.TotalAlloc - before.TotalAlloc
			t.Logf("answered %d; allocated %.1f MiB while 256 MiB streamed", code, float64(grew)/(1<<20))
			if code != http.StatusRequestEntityTooLarge {
				t.Errorf("256 MiB webhook answered %d, want 413: %s", code, body)
			}
			if grew > c.maxHeap {
				t.Fatalf("the process allocated %d MiB while 256 MiB streamed, want < %d MiB", grew>>20, c.maxHeap>>20)
			}
		})
	}
	pr := openPR(env)
	p, ev := env.Repo.IssueCommentEvent(pr.Number, "alice", "/help")
	env.Deliver(p, ev) // fails the test unless 2xx
}

// streamBody sends size bytes of '{' at the webhook endpoint without ever
// holding them, and reads the answer while it still sends: the server
// answers and hangs up long before the end.
func streamBody(t *testing.T, addr, header string, size int64, chunked bool) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	framing := fmt.Sprintf("Content-Length: %d\r\n", size)
	if chunked {
		framing = "Transfer-Encoding: chunked\r\n"
	}
	head := "POST /api/github/hook HTTP/1.1\r\nHost: strata\r\nContent-Type: application/json\r\n" +
		"X-GitHub-Event: issue_comment\r\nX-GitHub-Delivery: " + apptest.NewDeliveryID() + "\r\n" + header + framing + "\r\n"
	if _, err := io.WriteString(conn, head); err != nil {
		t.Fatal(err)
	}
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		chunk := []byte(strings.Repeat("{", 64<<10))
		prefix, suffix := []byte(fmt.Sprintf("%x\r\n", len(chunk))), []byte("\r\n")
		for n := int64(0); n < size; n += int64(len(chunk)) {
			if chunked {
				if _, err := conn.Write(prefix); err != nil {
					return
				}
			}
			if _, err := conn.Write(chunk); err != nil {
				return // the server hung up: expected
			}
			if chunked {
				if _, err := conn.Write(suffix); err != nil {
					return
				}
			}
		}
		if chunked {
			_, _ = io.WriteString(conn, "0\r\n\r\n")
		}
	}()
	_ = conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer to a huge body: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	conn.Close()
	<-sent
	return res.StatusCode, string(b)
}

// A signed payload that does not parse as its event (a time in a format
// GitHub's examples sometimes show, a number for a string, cut-off JSON) is
// the sender's problem: 400 with the reason, never 5xx. A valid payload of
// an event or action Strata does not handle stays 2xx.
func TestUnparsableWebhooksAre400WithTheReason(t *testing.T) {
	env := apptest.Start(t, apptest.Options{Dialect: store.SQLite})
	pr := openPR(env)
	body := func(change func(pull map[string]any)) []byte {
		p, _ := env.Repo.PullRequestEvent("opened", pr.Number)
		change(p["pull_request"].(map[string]any))
		b, err := json.Marshal(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cases := []struct {
		name, event, secret string
		body                []byte
		want                int
		reason              string
	}{
		{"time with a space and an offset", "pull_request", apptest.WebhookSecret, body(func(p map[string]any) { p["created_at"] = "2026-12-03 10:00:00 +0000" }), 400, "parse pull_request payload: parsing time"},
		{"number for a string", "pull_request", apptest.WebhookSecret, body(func(p map[string]any) { p["title"] = 42 }), 400, "parse pull_request payload: json: cannot unmarshal number"},
		{"cut-off JSON", "issue_comment", apptest.WebhookSecret, []byte(`{"action":"created","comment":{"body":"/plan"`), 400, "parse issue_comment payload: unexpected end of JSON input"},
		// The signature is checked before anything is decoded.
		{"cut-off JSON signed with another secret", "issue_comment", "not-the-secret", []byte(`{"action":`), 400, "signature check failed"},
		{"an event Strata does not take", "star", apptest.WebhookSecret, []byte(`{"action":"created"}`), 202, ""},
		{"an action Strata does not take", "pull_request", apptest.WebhookSecret, labeled(t, env), 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, answer := deliverSigned(t, env.HookURL, c.secret, c.event, c.body)
			if code != c.want {
				t.Fatalf("answered %d, want %d: %s", code, c.want, answer)
			}
			if !strings.Contains(answer, c.reason) {
				t.Fatalf("the answer does not give the reason %q: %s", c.reason, answer)
			}
		})
	}
	env.WaitIdle(20 * time.Second)
	if n := len(comments(env.Repo, pr.Number, env.GitHub.BotLogin())); n != 0 {
		t.Fatalf("Strata commented %d times after payloads it could not parse", n)
	}
}

// labeled is a valid pull_request payload of an action Strata ignores.
func labeled(t *testing.T, env *apptest.Env) []byte {
	p, _ := env.Repo.PullRequestEvent("opened", 1)
	p["action"] = "labeled"
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// deliverSigned posts a raw body signed as GitHub signs it: the payloads
// here are ones githubtest.Deliver would refuse to send.
func deliverSigned(t *testing.T, url, secret, event string, body []byte) (int, string) {
	t.Helper()
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", apptest.NewDeliveryID())
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// A slowloris client sends its headers a byte at a time to hold a
// connection forever; the server hangs up at ReadHeaderTimeout (10s).
func TestSlowHeadersAreCut(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.Options{Dialect: store.SQLite})
	conn, err := net.Dial("tcp", env.Server.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// The server's answer, if any, up to its hang-up (EOF).
	type hangUp struct {
		answer []byte
		err    error
	}
	cut := make(chan hangUp, 1)
	go func() {
		_ = conn.SetReadDeadline(time.Now().Add(30 * time.Second))
		b, err := io.ReadAll(conn)
		cut <- hangUp{b, err}
	}()
	start := time.Now()
	headers := "POST /api/github/hook HTTP/1.1\r\nHost: strata\r\n" + strings.Repeat("X-Slow: a\r\n", 1000)
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; i++ {
		select {
		case h := <-cut:
			if ne, ok := h.err.(net.Error); ok && ne.Timeout() {
				t.Fatalf("the server still held the slow connection after %s", time.Since(start).Round(time.Second))
			}
			t.Logf("the server hung up after %s, answering %q (%v)", time.Since(start).Round(time.Second), h.answer, h.err)
			return
		case <-tick.C:
			if i >= len(headers) {
				t.Fatal("the slow client sent all its headers before the server hung up")
			}
			_, _ = conn.Write([]byte{headers[i]}) // after the hang-up, the read above ends
		}
	}
}
