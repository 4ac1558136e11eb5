package intake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"
)

// loadgenEnv carries a load, as JSON, to this binary started as the
// generator. Not a STRATA_ name: those are `strata serve`'s, which refuses
// one it does not know.
const loadgenEnv = "INTAKE_BENCH_LOAD"

// load is what the generator sends: N signed deliveries of one body, from
// Clients connections each waiting for its answer, or with Rate > 0 one
// started every 1/Rate seconds whatever the answers.
type load struct {
	URL, Event, Signature, BodyFile, DeliveryPrefix string
	N, Clients, Rate                                int
}

// result is what the generator prints: each delivery's time from sending
// to its whole answer, and how long all took.
type result struct {
	Latencies  []time.Duration
	Elapsed    time.Duration
	Failed     int
	FirstError string
}

// runLoadgen sends the load of spec and prints its result on stdout; its
// exit code is non-zero when it could not start.
func runLoadgen(spec string) int {
	var l load
	if err := json.Unmarshal([]byte(spec), &l); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		return 2
	}
	body, err := os.ReadFile(l.BodyFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	res := result{Latencies: make([]time.Duration, l.N)}
	var mu sync.Mutex
	send := func(i int) {
		req, _ := http.NewRequest(http.MethodPost, l.URL, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", l.Event)
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("%s-%d", l.DeliveryPrefix, i))
		req.Header.Set("X-Hub-Signature-256", l.Signature)
		t0 := time.Now()
		r, err := client.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if err == nil && r.StatusCode != http.StatusOK {
				err = fmt.Errorf("answered %s", r.Status)
			}
		}
		res.Latencies[i] = time.Since(t0)
		if err != nil {
			mu.Lock()
			if res.Failed++; res.FirstError == "" {
				res.FirstError = err.Error()
			}
			mu.Unlock()
		}
	}
	var wg sync.WaitGroup
	start := time.Now()
	if l.Rate > 0 {
		interval := time.Second / time.Duration(l.Rate)
		for i := 0; i < l.N; i++ {
			time.Sleep(time.Until(start.Add(time.Duration(i) * interval)))
			wg.Add(1)
			go func() { defer wg.Done(); send(i) }()
		}
	} else {
		next := make(chan int, l.N)
		for i := 0; i < l.N; i++ {
			next <- i
		}
		close(next)
		for c := 0; c < l.Clients; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					send(i)
				}
			}()
		}
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}
