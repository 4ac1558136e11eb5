// Package intake benchmarks webhook intake: signature check, parse, durable
// enqueue and the answer, on SQLite and on PostgreSQL, from a load
// generator outside Strata: `strata serve` runs in a process of its own
// (strataproc), against the fake GitHub of this one. Run:
//
//	go test ./bench/intake -run '^$' -bench . -benchtime 3000x
package intake

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/bench/internal/strataproc"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// Two loads: 8 clients each sending its next delivery on the answer (how
// many per second the server takes at most, as GitHub's own retries and a
// busy installation look), and deliveries offered at a steady 1,000 per
// second (the latency at the target rate).
func BenchmarkIntake(b *testing.B) {
	strata := strataproc.Build(b)
	for _, d := range storetest.Dialects {
		b.Run(string(d)+"/burst8", func(b *testing.B) { benchIntake(b, strata, d, 8, 0) })
		b.Run(string(d)+"/rate1000", func(b *testing.B) { benchIntake(b, strata, d, 0, 1000) })
	}
}

// benchIntake sends b.N deliveries: from `clients` goroutines each waiting
// for its answer, or, with rate > 0, one started every 1/rate seconds
// whatever the answers (an open loop, so a slow answer cannot slow the load).
//
// The server has its default 4 workers, which answer each `/help` on the fake
// GitHub meanwhile: intake shares the 2 cores with them (and with the fake,
// which validates every request against GitHub's OpenAPI description).
func benchIntake(b *testing.B, strata string, d store.Dialect, clients, rate int) {
	gh := githubtest.NewServer(b)
	repo := gh.AddRepo("acme", "infra")
	db := storetest.URL(b, d)
	srv, err := strataproc.Start("a", strataproc.Config{Strata: strata, GitHub: gh, DatabaseURL: db, DataDir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = srv.Cmd.Process.Kill(); <-srv.Done })
	st, err := store.Open(context.Background(), db, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	// The jobs every start runs (lock repair, drift discovery, pruning) are
	// done before the load starts: intake is measured in steady state.
	apptest.WaitIdle(b, st, time.Minute)
	repo.Commit("feature", map[string]string{"README.md": "v2\n"}, "docs")
	pr := repo.OpenPR("feature", "main", "alice")
	payload, event := repo.IssueCommentEvent(pr.Number, "alice", "/help")
	body, err := json.Marshal(payload)
	if err != nil {
		b.Fatal(err)
	}
	mac := hmac.New(sha256.New, []byte(apptest.WebhookSecret))
	mac.Write(body)
	signature := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}

	latencies := make([]time.Duration, b.N)
	var failed atomic.Int64
	send := func(i int) {
		req, _ := http.NewRequest(http.MethodPost, srv.HookURL(), bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("%s-%d", b.Name(), i))
		req.Header.Set("X-Hub-Signature-256", signature)
		t0 := time.Now()
		res, err := client.Do(req)
		latencies[i] = time.Since(t0)
		if err != nil {
			failed.Add(1)
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			failed.Add(1)
		}
	}
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	if rate > 0 {
		interval := time.Second / time.Duration(rate)
		for i := 0; i < b.N; i++ {
			time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
			wg.Add(1)
			go func() { defer wg.Done(); send(i) }()
		}
	} else {
		var next atomic.Int64
		for c := 0; c < clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := int(next.Add(1)) - 1; i < b.N; i = int(next.Add(1)) - 1 {
					send(i)
				}
			}()
		}
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Fatalf("%d of %d deliveries failed", n, b.N)
	}
	sort.Slice(latencies, func(i, j int) bool { return latencies[i] < latencies[j] })
	pct := func(p float64) float64 {
		return float64(latencies[int(p*float64(len(latencies)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(0, "ns/op")
}
