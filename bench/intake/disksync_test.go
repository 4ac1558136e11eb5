package intake

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// BenchmarkDiskSync measures what a durable commit cannot be faster than on
// this machine: one 8 kB write to a log and fdatasync, as PostgreSQL
// flushes its WAL for a commit with synchronous_commit on (its default,
// and Strata's). It is the same as pg_test_fsync's "fdatasync" line, with
// the percentiles beside the mean: a p99 of a commit cannot be under the
// p99 of the flush it waits for, nor under one flush plus the one before
// it that it queued behind.
//
// Two ways to write: rewrite writes the same page every time, as a commit
// of a few hundred bytes does (PostgreSQL writes the WAL page it is
// filling again at each flush until it is full; pg_test_fsync does the
// same), and append writes the next page every time, as a commit of 8 kB
// or more does.
//
// The file is in INTAKE_BENCH_SYNC_DIR (default: a temporary directory);
// point it at PostgreSQL's data directory's file system when they differ.
//
//	go test ./bench/intake -run '^$' -bench DiskSync -benchtime 5000x
func BenchmarkDiskSync(b *testing.B) {
	b.Run("rewrite", func(b *testing.B) { benchDiskSync(b, func(int) int64 { return 0 }) })
	b.Run("append", func(b *testing.B) { benchDiskSync(b, func(i int) int64 { return int64(i*page) % segment }) })
}

// A log of 16 MB, as PostgreSQL's WAL segments are, of 8 kB pages.
const page, segment = 8 << 10, 16 << 20

// benchDiskSync writes a page at the offset at(i) and flushes it, b.N times.
func benchDiskSync(b *testing.B, at func(i int) int64) {
	dir := os.Getenv("INTAKE_BENCH_SYNC_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	f, err := os.CreateTemp(dir, "disksync-*")
	if err != nil {
		b.Fatal(err)
	}
	defer os.Remove(f.Name())
	defer f.Close()

	// The log is written whole before the timing: a flush then writes
	// data, not the file's size.
	buf := make([]byte, page)
	for off := int64(0); off < segment; off += page {
		if _, err := f.WriteAt(buf, off); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Sync(); err != nil {
		b.Fatal(err)
	}

	lat := make([]time.Duration, 0, b.N)
	fd := int(f.Fd())
	b.ResetTimer()
	for i := range b.N {
		buf[0] = byte(i)
		start := time.Now()
		if _, err := unix.Pwrite(fd, buf, at(i)); err != nil {
			b.Fatal(err)
		}
		if err := unix.Fdatasync(fd); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	var sum time.Duration
	for _, l := range lat {
		sum += l
	}
	b.ReportMetric(float64(sum.Microseconds())/1000/float64(len(lat)), "mean-ms")
	pct := percentiles(lat)
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(0.999), "p99.9-ms")
	b.ReportMetric(pct(1), "max-ms")
	b.ReportMetric(0, "ns/op")
}
