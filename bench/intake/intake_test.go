// Package intake benchmarks webhook intake: signature check, parse, durable
// enqueue and the answer, on SQLite and on PostgreSQL, from a load
// generator outside Strata: `strata serve` runs in a process of its own
// (strataproc), against the fake GitHub of this one, and the deliveries
// come from a third process (this test binary run again as the generator,
// loadgen), so neither the fake's garbage collection nor its work for
// Strata's workers delays the generator's clock. Run:
//
//	go test ./bench/intake -run '^$' -bench . -benchtime 3000x
//
// Loads: burst8 (8 connections, each sending on the answer), rate1000 (an
// open loop at 1,000 a second) and paced8 (1,000 a second over 8
// connections, each delivery's time counted from when it was due).
// INTAKE_BENCH_SERVE_ENV and INTAKE_BENCH_SERVE_LOG set the server's
// environment and keep its log (intake_test.go, serveEnv).
//
// With INTAKE_BENCH_GITHUB=idle the fake runs as if on a machine of its
// own (elsewhere_test.go). INTAKE_BENCH_PROBE adds a probe beside the load
// (probeEnv).
//
// BenchmarkFloor (floor_test.go) measures what a delivery would wait for if
// intake cost the least any receiver can, with the workers busy.
//
// BenchmarkDiskSync (disksync_test.go) measures the flush a durable commit
// waits for on the machine, with its percentiles.
package intake

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"strata.dev/strata/apptest"
	"strata.dev/strata/bench/internal/strataproc"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// TestMain runs the load generator or the null intake when this binary is
// started as one (loadgenEnv, nullEnv), and the benchmarks otherwise.
func TestMain(m *testing.M) {
	if spec := os.Getenv(loadgenEnv); spec != "" {
		os.Exit(runLoadgen(spec))
	}
	if spec := os.Getenv(nullEnv); spec != "" {
		os.Exit(runNullIntake(spec))
	}
	os.Exit(m.Run())
}

// Two loads: 8 clients each sending its next delivery on the answer (how
// many per second the server takes at most, as GitHub's own retries and a
// busy installation look), and deliveries offered at a steady 1,000 per
// second (the latency at the target rate).
func BenchmarkIntake(b *testing.B) {
	strata := strataproc.Build(b)
	for _, d := range storetest.Dialects {
		b.Run(string(d)+"/burst8", func(b *testing.B) { benchIntake(b, strata, d, 8, 0) })
		b.Run(string(d)+"/rate1000", func(b *testing.B) { benchIntake(b, strata, d, 0, 1000) })
		b.Run(string(d)+"/paced8", func(b *testing.B) { benchIntake(b, strata, d, 8, 1000) })
	}
}

// percentiles sorts lat and returns its p-th percentile (p from 0 to 1,
// 1 the largest) in milliseconds.
func percentiles(lat []time.Duration) func(p float64) float64 {
	slices.Sort(lat)
	return func(p float64) float64 {
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
	}
}

// appendLog adds a server's log to the file, under the benchmark's name:
// each sub-benchmark has a server of its own.
func appendLog(file, name, log string) error {
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "=== %s\n%s", name, log); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// serveEnv adds settings to `strata serve`'s environment, NAME=value
// separated by spaces (GOGC=400, GODEBUG=gctrace=1), and serveLogEnv names
// a file each server's log is added to when its run ends: the Go runtime's
// settings and traces of the server alone, not of the fake or the
// generator. Not STRATA_ names: `strata serve` refuses one it does not know.
const (
	serveEnv    = "INTAKE_BENCH_SERVE_ENV"
	serveLogEnv = "INTAKE_BENCH_SERVE_LOG"
)

// probeEnv adds a probe beside the load, 100 tries a second (loadgen's
// probe): "healthz", Strata's GET /healthz, the wait of a request that does
// no work in the same process on the same cores; "insert" (PostgreSQL
// only), one row committed on its own from the generator, the wait of the
// least a durable intake can do there. Their p50 and p99 are reported as
// probe-p50-ms and probe-p99-ms: the floor under a delivery's on this
// machine, under this load.
const (
	probeEnv  = "INTAKE_BENCH_PROBE"
	probeRate = 100
)

// probeOf is the probe probeEnv asks for against srv and db.
func probeOf(b *testing.B, d store.Dialect, srv *strataproc.Process, db string) probe {
	p := probe{Kind: os.Getenv(probeEnv), Rate: probeRate}
	switch p.Kind {
	case "":
	case "healthz":
		p.HealthURL = "http://" + srv.Addr + "/healthz"
	case "insert":
		if d != store.Postgres {
			b.Fatalf("%s=insert is for PostgreSQL: SQLite has one writer, Strata", probeEnv)
		}
		p.DatabaseURL = db
		conn, err := pgx.Connect(context.Background(), db)
		if err != nil {
			b.Fatal(err)
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(context.Background(), `CREATE TABLE intake_probe (id bigserial PRIMARY KEY, at timestamptz NOT NULL)`); err != nil {
			b.Fatal(err)
		}
	default:
		b.Fatalf("%s=%q: a probe is healthz or insert", probeEnv, p.Kind)
	}
	return p
}

// benchIntake sends b.N deliveries: from `clients` connections each waiting
// for its answer; with rate > 0 and no clients, one started every 1/rate
// seconds whatever the answers (an open loop, so a slow answer cannot slow
// the load); with both, paced at rate over at most `clients` connections
// (load says how each is timed).
//
// The server has its default 4 workers, which answer each `/help` on the fake
// GitHub meanwhile: intake shares the 2 cores with them (and with the fake,
// which validates every request against GitHub's OpenAPI description).
func benchIntake(b *testing.B, strata string, d store.Dialect, clients, rate int) {
	x := startBench(b, strata, d)
	spec := x.spec
	spec.N, spec.Clients, spec.Rate = b.N, clients, rate
	before := jobsEnded(scrape(b, x.srv))
	b.ResetTimer()
	res := x.generate(b, spec)
	b.StopTimer()
	after := scrape(b, x.srv)
	worked := jobsEnded(after) - before
	pct := percentiles(res.Latencies)
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/res.Elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(serverP99(b, after), "server-p99-le-ms")
	// The workers' pace meanwhile: the condition "with the workers busy"
	// measured, not assumed (River gives 4 workers some 80 jobs a second).
	b.ReportMetric(worked/res.Elapsed.Seconds(), "jobs/s")
	reportProbe(b, res)
	b.ReportMetric(0, "ns/op")
}

// reportProbe reports the probe's percentiles, when there was one.
func reportProbe(b *testing.B, res result) {
	if len(res.Probe) > 0 {
		pct := percentiles(res.Probe)
		b.ReportMetric(pct(0.50), "probe-p50-ms")
		b.ReportMetric(pct(0.99), "probe-p99-ms")
	}
}

// bench is a `strata serve` at rest, with its fake GitHub, a store on its
// database, and the load's signed delivery (spec: N, Clients and Rate
// still to be set).
type bench struct {
	srv       *strataproc.Process
	st        *store.Store
	spec      load
	elsewhere bool
}

func startBench(b *testing.B, strata string, d store.Dialect) *bench {
	x := &bench{elsewhere: githubElsewhere(b)}
	gh := githubtest.NewServer(b)
	repo := gh.AddRepo("acme", "infra")
	db := storetest.URL(b, d)
	srv, err := strataproc.Start("a", strataproc.Config{Strata: strata, GitHub: gh, DatabaseURL: db, DataDir: b.TempDir(), Env: strings.Fields(os.Getenv(serveEnv))})
	if err != nil {
		b.Fatal(err)
	}
	x.srv = srv
	b.Cleanup(func() {
		_ = srv.Cmd.Process.Kill()
		<-srv.Done
		if f := os.Getenv(serveLogEnv); f != "" {
			if err := appendLog(f, b.Name(), srv.Log.String()); err != nil {
				b.Errorf("%s: %v", serveLogEnv, err)
			}
		}
	})
	if x.st, err = store.Open(context.Background(), db, b.TempDir()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { x.st.Close() })
	// The jobs every start runs (lock repair, drift discovery, pruning) are
	// done before the load starts: intake is measured in steady state.
	apptest.WaitIdle(b, x.st, time.Minute)
	repo.Commit("feature", map[string]string{"README.md": "v2\n"}, "docs")
	pr := repo.OpenPR("feature", "main", "alice")
	payload, event := repo.IssueCommentEvent(pr.Number, "alice", "/help")
	body, err := json.Marshal(payload)
	if err != nil {
		b.Fatal(err)
	}
	mac := hmac.New(sha256.New, []byte(apptest.WebhookSecret))
	mac.Write(body)
	bodyFile := filepath.Join(b.TempDir(), "body.json")
	if err := os.WriteFile(bodyFile, body, 0o600); err != nil {
		b.Fatal(err)
	}
	x.spec = load{
		URL: srv.HookURL(), Event: event, Signature: "sha256=" + hex.EncodeToString(mac.Sum(nil)),
		BodyFile: bodyFile, DeliveryPrefix: b.Name(), Probe: probeOf(b, d, srv, db),
	}
	return x
}

// generate runs the load generator with spec and returns its result.
func (x *bench) generate(b *testing.B, spec load) result {
	specJSON, err := json.Marshal(spec)
	if err != nil {
		b.Fatal(err)
	}
	var out, stderr bytes.Buffer
	gen := exec.Command(os.Args[0])
	gen.Env = append(os.Environ(), loadgenEnv+"="+string(specJSON))
	gen.Stdout, gen.Stderr = &out, &stderr
	if err := gen.Start(); err != nil {
		b.Fatalf("load generator: %v", err)
	}
	restore := func() error { return nil }
	if x.elsewhere {
		if restore, err = idle(); err != nil {
			_ = gen.Process.Kill()
			_ = gen.Wait()
			b.Fatalf("%s=idle: %v", githubEnv, err)
		}
	}
	waitErr := gen.Wait()
	if err := restore(); err != nil {
		b.Fatalf("%s=idle: %v", githubEnv, err)
	}
	if waitErr != nil {
		b.Fatalf("load generator: %v\n%s", waitErr, stderr.Bytes())
	}
	var res result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		b.Fatalf("load generator's result: %v\n%s", err, out.Bytes())
	}
	if res.Failed > 0 {
		b.Fatalf("%d of %d deliveries failed: %s", res.Failed, spec.N, res.FirstError)
	}
	return res
}

// serverP99 reads the server's own account of intake: the bound of the
// bucket of strata_webhook_duration_seconds that holds its 99th percentile,
// in milliseconds. Beside the generator's p99 it tells the time Strata took
// from the time the answer spent in the kernel and the scheduler.
func serverP99(b *testing.B, metrics map[string]*dto.MetricFamily) float64 {
	f := metrics["strata_webhook_duration_seconds"]
	if f == nil || len(f.Metric) != 1 {
		b.Fatal("the server's /metrics has no strata_webhook_duration_seconds")
	}
	h := f.Metric[0].GetHistogram()
	for _, bucket := range h.Bucket {
		if float64(bucket.GetCumulativeCount()) >= 0.99*float64(h.GetSampleCount()) {
			return bucket.GetUpperBound() * 1000
		}
	}
	return math.Inf(1)
}

// jobsEnded is how many job attempts the server's workers had ended when
// its metrics were read (strata_jobs_total, every kind and state).
func jobsEnded(metrics map[string]*dto.MetricFamily) float64 {
	var n float64
	if f := metrics["strata_jobs_total"]; f != nil {
		for _, m := range f.Metric {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// scrape reads the server's metrics listener.
func scrape(b *testing.B, srv *strataproc.Process) map[string]*dto.MetricFamily {
	res, err := http.Get("http://" + srv.Metrics + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(res.Body)
	if err != nil {
		b.Fatal(err)
	}
	return families
}
