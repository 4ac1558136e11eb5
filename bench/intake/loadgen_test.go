package intake

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// loadgenEnv carries a load, as JSON, to this binary started as the
// generator. Not a STRATA_ name: those are `strata serve`'s, which refuses
// one it does not know.
const loadgenEnv = "INTAKE_BENCH_LOAD"

// load is what the generator sends: N signed deliveries of one body.
//   - Clients > 0, Rate 0: from Clients connections, each sending its next
//     delivery on the answer (as fast as the server goes).
//   - Clients 0, Rate > 0: one started every 1/Rate seconds whatever the
//     answers, each on a connection of its own when none is free (an open
//     loop).
//   - Both: delivery i is due at i/Rate seconds, sent by the first of the
//     Clients connections free at or after that time. When no connection
//     was free when it was due, its latency counts from then, not from when
//     it went, so a slow answer that delays the next delivery is charged to
//     that delivery too (no coordinated omission); otherwise from when it
//     went, as in the open loop, so that the generator's own late wake-up
//     from its sleep is not charged to the server.
type load struct {
	URL, Event, Signature, BodyFile, DeliveryPrefix string
	N, Clients, Rate                                int
	Probe                                           probe
}

// probe is the least a delivery's answer could wait for beside the load,
// timed while the deliveries go: every 1/Rate seconds, on a connection of
// its own, either Strata's GET /healthz (HealthURL: the same process and
// cores, no work) or one INSERT committed on its own (DatabaseURL: a
// PostgreSQL round trip and WAL flush, the least a durable intake does).
// Each is timed from when it was due, as paced deliveries are.
type probe struct {
	Kind                   string // "healthz" or "insert"; none when empty
	HealthURL, DatabaseURL string
	Rate                   int
}

// result is what the generator prints: each delivery's time from sending
// to its whole answer, and how long all took.
type result struct {
	Latencies  []time.Duration
	Probe      []time.Duration // the probe's, when there is one
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
	probed, stopProbe := make(chan error, 1), make(chan struct{})
	if l.Probe.Kind == "" {
		probed <- nil
	} else {
		try, err := l.Probe.open()
		if err != nil {
			fmt.Fprintln(os.Stderr, "probe:", err)
			return 2
		}
		go func() {
			lat, err := l.Probe.run(try, stopProbe)
			res.Probe = lat
			probed <- err
		}()
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	interval := time.Duration(0)
	if l.Rate > 0 {
		interval = time.Second / time.Duration(l.Rate)
	}
	// due is when delivery i is to be sent: start itself when the load is
	// not paced.
	due := func(i int) time.Time { return start.Add(time.Duration(i) * interval) }
	// send sends delivery i and times it from t0, or from now when t0 is
	// zero.
	send := func(i int, t0 time.Time) {
		req, _ := http.NewRequest(http.MethodPost, l.URL, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", l.Event)
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("%s-%d", l.DeliveryPrefix, i))
		req.Header.Set("X-Hub-Signature-256", l.Signature)
		if t0.IsZero() {
			t0 = time.Now()
		}
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
	if l.Clients == 0 {
		for i := 0; i < l.N; i++ {
			time.Sleep(time.Until(due(i)))
			wg.Add(1)
			go func() { defer wg.Done(); send(i, time.Time{}) }()
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
					var t0 time.Time // a closed loop: from when it goes
					if l.Rate > 0 {
						t0 = due(i) // the connection was free too late
						if wait := time.Until(t0); wait > 0 {
							time.Sleep(wait)
							t0 = time.Time{}
						}
					}
					send(i, t0)
				}
			}()
		}
	}
	wg.Wait()
	res.Elapsed = time.Since(start)
	close(stopProbe)
	if err := <-probed; err != nil {
		fmt.Fprintln(os.Stderr, "probe:", err)
		return 2
	}
	if err := json.NewEncoder(os.Stdout).Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return 0
}

// open connects the probe and returns one try of it.
func (p probe) open() (func() error, error) {
	switch p.Kind {
	case "healthz":
		client := &http.Client{Transport: &http.Transport{}}
		return func() error {
			r, err := client.Get(p.HealthURL)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if err == nil && r.StatusCode != http.StatusOK {
				err = fmt.Errorf("GET /healthz answered %s", r.Status)
			}
			return err
		}, nil
	case "insert":
		conn, err := pgx.Connect(context.Background(), p.DatabaseURL)
		if err != nil {
			return nil, err
		}
		return func() error {
			_, err := conn.Exec(context.Background(), `INSERT INTO intake_probe (at) VALUES (now())`)
			return err
		}, nil
	}
	return nil, fmt.Errorf("%q: a probe is healthz or insert", p.Kind)
}

// run tries the probe every 1/Rate seconds until stop is closed, and
// returns how long each try took from when it was due.
func (p probe) run(try func() error, stop <-chan struct{}) ([]time.Duration, error) {
	var lat []time.Duration
	interval := time.Second / time.Duration(p.Rate)
	start := time.Now()
	for i := 0; ; i++ {
		due := start.Add(time.Duration(i) * interval)
		select {
		case <-stop:
			return lat, nil
		case <-time.After(time.Until(due)):
		}
		if err := try(); err != nil {
			return lat, err
		}
		lat = append(lat, time.Since(due))
	}
}
