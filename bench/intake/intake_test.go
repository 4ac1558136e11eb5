// Package intake benchmarks webhook intake: signature check, parse, durable
// enqueue and the answer, from a load generator on loopback, on SQLite and
// on PostgreSQL. Run:
//
//	go test ./bench/intake -run '^$' -bench . -benchtime 3000x
package intake

import (
	"bytes"
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
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// Two loads: a burst of 16 deliveries in flight at once (how many per second
// the server takes at most), and deliveries offered at a steady 500 per
// second (the latency at the target rate).
func BenchmarkIntake(b *testing.B) {
	for _, d := range storetest.Dialects {
		b.Run(string(d)+"/burst16", func(b *testing.B) { benchIntake(b, d, 16, 0) })
		b.Run(string(d)+"/rate500", func(b *testing.B) { benchIntake(b, d, 0, 500) })
	}
}

// benchIntake sends b.N deliveries: from `clients` goroutines each waiting
// for its answer, or, with rate > 0, one started every 1/rate seconds
// whatever the answers (an open loop, so a slow answer cannot slow the load).
func benchIntake(b *testing.B, d store.Dialect, clients, rate int) {
	env := apptest.Start(b, apptest.Options{Dialect: d})
	// The jobs every start runs (lock repair, drift discovery, pruning) are
	// done before the load starts: intake is measured in steady state.
	env.WaitIdle(time.Minute)
	env.Repo.Commit("feature", map[string]string{"README.md": "v2\n"}, "docs")
	pr := env.Repo.OpenPR("feature", "main", "alice")
	payload, event := env.Repo.IssueCommentEvent(pr.Number, "alice", "/help")
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
		req, _ := http.NewRequest(http.MethodPost, env.HookURL, bytes.NewReader(body))
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
