package intake

import (
	"context"
	"os"
	"testing"
	"time"

	"strata.dev/strata/bench/internal/strataproc"
	"strata.dev/strata/queue"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// BenchmarkFloor measures the floor under intake with the workers busy:
// what a delivery would wait for at 1,000 a second if Strata's intake cost
// the least any webhook receiver can. First a backlog: deliveries go to
// Strata as fast as it takes them (burst8), far faster than its 4 workers
// answer them (River fetches at most 4 jobs every 50 ms, some 80 a
// second), so every worker stays taken, as during BenchmarkIntake's loads.
// Then, while they work the backlog off and no delivery reaches Strata, b.N
// deliveries at 1,000 a second (rate1000) go to the null intake
// (nullintake_test.go), a process of its own that checks each signature and
// answers (null1000), or records each delivery first, one transaction each,
// on a database of its own (durable1000); the probe (INTAKE_BENCH_PROBE:
// Strata's /healthz when unset) runs beside them. Reported: the null
// intake's p50 and p99, the probe's, and the workers' jobs a second
// meanwhile. It fails when the backlog ran out before the load ended.
//
//	go test ./bench/intake -run '^$' -bench Floor -benchtime 3000x
func BenchmarkFloor(b *testing.B) {
	if os.Getenv(probeEnv) == "" {
		b.Setenv(probeEnv, "healthz")
	}
	strata := strataproc.Build(b)
	for _, d := range storetest.Dialects {
		b.Run(string(d)+"/null1000", func(b *testing.B) { benchFloor(b, strata, d, false) })
		b.Run(string(d)+"/durable1000", func(b *testing.B) { benchFloor(b, strata, d, true) })
	}
}

// benchFloor runs the floor's load; durable, the null intake records each
// delivery on a database of its own of the same kind as Strata's.
func benchFloor(b *testing.B, strata string, d store.Dialect, durable bool) {
	x := startBench(b, strata, d)
	db := ""
	if durable {
		db = storetest.URL(b, d)
	}
	null := startNullIntake(b, db)
	backlog := x.spec
	backlog.Probe = probe{}
	// Enough for the workers to be busy through the load at 80 jobs a
	// second, twice over.
	backlog.N, backlog.Clients = 1000+b.N/4, 8
	x.generate(b, backlog)
	spec := x.spec
	spec.URL, spec.DeliveryPrefix = null, b.Name()+"-null"
	spec.N, spec.Rate = b.N, 1000
	before := pending(b, x.st)
	b.ResetTimer()
	start := time.Now()
	res := x.generate(b, spec)
	elapsed := time.Since(start)
	b.StopTimer()
	after := pending(b, x.st)
	if after == 0 {
		b.Fatalf("the backlog of %d jobs ran out before the load ended: the workers were not busy throughout", backlog.N)
	}
	pct := percentiles(res.Latencies)
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(float64(b.N)/res.Elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(before-after)/elapsed.Seconds(), "jobs/s")
	reportProbe(b, res)
	b.ReportMetric(0, "ns/op")
}

// pending is how many of the server's jobs are not done yet.
func pending(b *testing.B, st *store.Store) int {
	n, err := queue.Pending(context.Background(), st)
	if err != nil {
		b.Fatal(err)
	}
	return n
}
