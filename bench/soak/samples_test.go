package soak

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"strata.dev/strata/store"
)

// sampleEvery is the period of the samples: 360 over 30 minutes.
const sampleEvery = 5 * time.Second

// sample is what one look at the servers and the database saw.
type sample struct {
	at      time.Duration
	servers []serverSample
	db      int64 // bytes; -1 when it could not be read
}

type serverSample struct {
	name  string
	start int
	usage
}

func (s *soaker) sample(ctx context.Context) {
	tk := time.NewTicker(sampleEvery)
	defer tk.Stop()
	for {
		s.sampleOnce(ctx)
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
	}
}

func (s *soaker) sampleOnce(ctx context.Context) {
	s.mu.Lock()
	servers := append([]*server(nil), s.servers...)
	s.mu.Unlock()
	smp := sample{at: time.Since(s.begin), db: s.dbSize(ctx)}
	for _, srv := range servers {
		u, err := srv.usage(ctx)
		if err != nil {
			continue // killed between the list and the look
		}
		smp.servers = append(smp.servers, serverSample{name: srv.name, start: srv.start, usage: u})
	}
	s.mu.Lock()
	s.samples = append(s.samples, smp)
	s.mu.Unlock()
}

// dbSize is the database's size on disk: SQLite's file with its WAL and
// shared memory, or the tables, indexes and TOAST of the PostgreSQL schema.
func (s *soaker) dbSize(ctx context.Context) int64 {
	if s.st.Dialect() == store.SQLite {
		var n int64
		path := strings.TrimPrefix(s.sp.db, "sqlite://")
		for _, suffix := range []string{"", "-wal", "-shm"} {
			if fi, err := os.Stat(path + suffix); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	var n int64
	err := s.st.DB().QueryRowContext(ctx, `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0)::bigint
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'm')`).Scan(&n)
	if err != nil {
		return -1
	}
	return n
}

// report prints the samples over time (at most about 30 rows) and, for
// the server that lives through the whole run (a), whether each figure
// stays flat after the warm-up: the largest value of the last third of
// the run after the warm-up against the largest of the first third. The
// database grows with the runs it keeps (their logs, plans and states,
// pruned after the retention, at least 72 h): its growth is given per
// minute and per request, not judged flat.
func (s *soaker) report(d *driver, dur, end time.Duration) {
	t := s.t
	s.mu.Lock()
	samples := append([]sample(nil), s.samples...)
	kills := append([]kill(nil), s.kills...)
	s.mu.Unlock()

	var b strings.Builder
	fmt.Fprintf(&b, "traffic for %s (one action every %s: %v), %d requests that make a check, %d REST requests of the installation in its rate window, %d kills:",
		end.Round(time.Second), tick, d.ticks, len(d.requests), d.gh.RateLimitUsed(), len(kills))
	for _, k := range kills {
		fmt.Fprintf(&b, " %s mid-%s (b#%d)", k.at.Round(time.Second), k.phase, k.start)
	}
	b.WriteString("\n      time  server  RSS MB  goroutines  fds  procs | database MB\n")
	every := max(1, len(samples)/30)
	for i, smp := range samples {
		if i%every != 0 && i != len(samples)-1 {
			continue
		}
		for j, sv := range smp.servers {
			at, db := "", ""
			if j == 0 {
				at, db = smp.at.Round(time.Second).String(), fmt.Sprintf("%.1f", float64(smp.db)/1e6)
			}
			fmt.Fprintf(&b, "%10s  %4s#%d  %6.1f  %10d  %3d  %5d | %s\n", at, sv.name, sv.start, float64(sv.rss)/1e6, sv.goroutines, sv.fds, sv.procs, db)
		}
	}
	t.Log(b.String())

	warm := dur / 5
	third := (end - warm) / 3
	first := func(at time.Duration) bool { return at >= warm && at < warm+third }
	last := func(at time.Duration) bool { return at >= end-third && at <= end }
	flat := true
	for _, m := range []struct {
		name  string
		of    func(usage) float64
		slack float64 // on top of 10 %
		unit  string
	}{
		{"RSS", func(u usage) float64 { return float64(u.rss) / 1e6 }, 8, "MB"},
		{"goroutines", func(u usage) float64 { return float64(u.goroutines) }, 10, ""},
		{"open files", func(u usage) float64 { return float64(u.fds) }, 5, ""},
	} {
		a, z := maxOf(samples, first, m.of), maxOf(samples, last, m.of)
		ok := z <= a*1.1+m.slack
		flat = flat && ok
		t.Logf("server a, %s after the %s warm-up: largest %.1f %s in the first third, %.1f %s in the last: %s", m.name, warm.Round(time.Second), a, m.unit, z, m.unit, verdict(ok))
	}
	if db0, db1, at0, at1 := dbSpan(samples, warm, end); at1 > at0 {
		start, _, _, _ := dbSpan(samples, 0, end)
		t.Logf("database: %.1f MB after the warm-up, %.1f MB at the end of the traffic: %+.2f MB a minute; %.1f KB per request since the start (%d requests)",
			float64(db0)/1e6, float64(db1)/1e6, float64(db1-db0)/1e6/(at1-at0).Minutes(), float64(db1-start)/1e3/float64(max(1, len(d.requests))), len(d.requests))
	}
	if dur >= 20*time.Minute && !flat {
		t.Errorf("server a's figures grew after the warm-up (above)")
	}
}

func verdict(ok bool) string {
	if ok {
		return "flat"
	}
	return "GROWING"
}

// maxOf is the largest figure of server a in the samples that in keeps.
func maxOf(samples []sample, in func(time.Duration) bool, of func(usage) float64) float64 {
	m := 0.0
	for _, smp := range samples {
		if !in(smp.at) {
			continue
		}
		for _, sv := range smp.servers {
			if sv.name == "a" {
				m = max(m, of(sv.usage))
			}
		}
	}
	return m
}

// dbSpan is the database's size at the first sample after the warm-up and
// at the last of the traffic.
func dbSpan(samples []sample, warm, end time.Duration) (from, to int64, at0, at1 time.Duration) {
	at0 = -1
	for _, smp := range samples {
		if smp.at < warm || smp.at > end || smp.db < 0 {
			continue
		}
		if at0 < 0 {
			from, at0 = smp.db, smp.at
		}
		to, at1 = smp.db, smp.at
	}
	return from, to, at0, at1
}
