// Package soak is Strata's endurance benchmark (issue 22, item 6): mixed
// traffic at a fixed rate for STRATA_SOAK_DURATION (default 30m) per
// configuration, against one `strata serve` on SQLite, then against two
// replicas on PostgreSQL of which the second is killed with SIGKILL, every
// tenth of the run, in the middle of a `terraform plan` and of a
// `terraform apply` in turn, and started again.
//
//	STRATA_SOAK=1 STRATA_TERRAFORM_BIN=$PWD/bin/terraform TF_CLI_CONFIG_FILE=/dev/null \
//	  go test ./bench/soak -run TestSoak -v -timeout 120m
//
// The servers are real processes (bench/logs builds and runs them the
// same way) against the fake GitHub of this process, which a proxy
// watches for every change of a check run. Every 5 s the soak samples each
// server's resident set and open files (/proc), its goroutines (go_goroutines
// on its metrics listener), the processes below it, and the database's size.
// At the end it asserts, from the fake GitHub, the store and the layers'
// provisioner logs: one check per request, each completed once and never
// reopened, with the outcome it must have; one plan comment per plan, one
// apply comment per apply, one reply per /help; no apply run twice; no
// lock lost or taken by another PR while its holder was open; every live
// log stream ended with its run. It prints the samples over time and
// whether they stay flat after the warm-up (asserted from 20 minutes on).
package soak

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"strata.dev/strata/apptest"
	"strata.dev/strata/bench/internal/strataproc"
	"strata.dev/strata/githubtest"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
	"strata.dev/strata/tooltest"
)

// configuration is one server, or two replicas of which the second dies.
type configuration struct {
	dialect  store.Dialect
	replicas int
}

func TestSoak(t *testing.T) {
	if os.Getenv("STRATA_BENCH") != "1" && os.Getenv("STRATA_SOAK") == "" {
		t.Skip("set STRATA_SOAK=1 (or STRATA_BENCH=1) to run the soak")
	}
	dur := 30 * time.Minute
	if v := os.Getenv("STRATA_SOAK_DURATION"); v != "" {
		var err error
		if dur, err = time.ParseDuration(v); err != nil || dur <= 0 {
			t.Fatalf("STRATA_SOAK_DURATION %q is not a duration (say 30m)", v)
		}
	}
	tf := apptest.TerraformBin(t)
	if _, err := os.Stat(tf); err != nil {
		tooltest.Missing(t, "terraform at "+tf, err)
	}
	if err := sandbox.Detect(sandbox.Settings{}).Err(); err != nil {
		tooltest.Missing(t, "Landlock", err)
	}
	strata := strataproc.Build(t)
	t.Run("one_server_sqlite", func(t *testing.T) { soak(t, strata, tf, configuration{store.SQLite, 1}, dur) })
	t.Run("two_replicas_postgres", func(t *testing.T) { soak(t, strata, tf, configuration{store.Postgres, 2}, dur) })
}

// soaker runs one configuration: its servers, the samples, the kills.
type soaker struct {
	t     *testing.T
	sp    spec
	st    *store.Store
	begin time.Time

	mu      sync.Mutex
	servers []*server // a, and b when there are replicas
	kills   []kill
	samples []sample
	lost    []string // the lock watcher's findings
}

type kill struct {
	at    time.Duration
	phase string // plan, apply
	start int    // of b
}

func soak(t *testing.T, strata, tf string, c configuration, dur time.Duration) {
	gh := githubtest.NewServer(t)
	// The soak measures endurance, not GitHub's limit: its traffic makes
	// about 23,000 REST requests an hour (5,000 in the first 13 minutes of
	// a 30-minute run, after which the commands failed), over any
	// installation's limit (12,500, 15,000 on Enterprise Cloud). The
	// report says how many it made.
	gh.SetHourlyRateLimit(100000)
	repo := gh.AddRepo("acme", "infra")
	ghURL, checks := recordChecks(t, gh)
	stateDir := t.TempDir()
	s := &soaker{t: t, sp: spec{strata: strata, terraform: tf, gh: gh, ghURL: ghURL,
		db: storetest.URL(t, c.dialect), dataDir: t.TempDir(), stateDir: stateDir}}
	d := &driver{t: t, gh: gh, repo: repo}
	d.seed(stateDir)

	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, srv := range s.servers {
			srv.kill()
			if t.Failed() {
				t.Logf("the end of strata serve %s#%d's log:\n%s", srv.name, srv.start, strataproc.LastLines(srv.Log.String(), 40))
			}
		}
	})
	for i, name := range []string{"a", "b"}[:c.replicas] {
		srv, err := s.sp.serve(name, 1)
		if err != nil {
			t.Fatal(err)
		}
		s.mu.Lock()
		s.servers = append(s.servers, srv)
		s.mu.Unlock()
		if i == 0 {
			d.hook = srv
		}
	}
	st, err := store.Open(context.Background(), s.sp.db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	s.st, d.st = st, st
	apptest.WaitIdle(t, st, 2*time.Minute) // the jobs of the servers' start
	d.ui = login(t, "http://"+d.hook.Addr, "alice")

	ctx, stop := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	s.begin = time.Now()
	bg.Add(2)
	go func() { defer bg.Done(); s.sample(ctx) }()
	go func() { defer bg.Done(); s.watchLocks(ctx, d.lanes) }()
	var killer sync.WaitGroup
	if c.replicas > 1 {
		killer.Add(1)
		go func() { defer killer.Done(); s.killEvery(ctx, max(dur/10, 15*time.Second)) }()
	}

	// The traffic, until the duration is over and, with replicas, one
	// kill caught a plan and one an apply.
	tk := time.NewTicker(tick)
	for i := 0; ; i++ {
		<-tk.C
		el := time.Since(s.begin)
		if el >= dur && (c.replicas == 1 || s.killed("plan") > 0 && s.killed("apply") > 0) {
			break
		}
		if el >= dur+10*time.Minute {
			t.Errorf("after %s, %d kills mid-plan and %d mid-apply: want one of each", el.Round(time.Second), s.killed("plan"), s.killed("apply"))
			break
		}
		d.fire(i)
	}
	tk.Stop()
	trafficEnd := time.Since(s.begin)
	// Stop killing (a restart under way finishes), then let every job end.
	stop()
	killer.Wait()
	apptest.WaitIdle(t, st, 15*time.Minute)
	// The queue can look at rest for a moment while a kill's lost apply
	// is marked interrupted and its report not yet enqueued (two
	// statements in queue/recovery.go): wait for what the requests must
	// show, then for the queue again.
	if !waitUntil(10*time.Minute, d.settled) {
		t.Errorf("the requests did not all show their checks and comments within 10 minutes (below)")
	}
	apptest.WaitIdle(t, st, 15*time.Minute)
	streams := d.ui.wait()
	bg.Wait()
	s.sampleOnce(context.Background()) // at rest

	s.verify(d, checks, streams)
	s.report(d, dur, trafficEnd)
}

// killEvery kills replica b every interval, once Terraform runs below it:
// a plan and an apply in turn, then starts it again.
func (s *soaker) killEvery(ctx context.Context, every time.Duration) {
	poll := time.NewTicker(20 * time.Millisecond)
	defer poll.Stop()
	for {
		phase := "plan"
		if s.killed("apply") < s.killed("plan") {
			phase = "apply"
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		victim := s.server(1)
		for !victim.runs(phase) {
			select {
			case <-ctx.Done():
				return
			case <-poll.C:
			}
		}
		victim.kill()
		s.mu.Lock()
		s.kills = append(s.kills, kill{at: time.Since(s.begin), phase: phase, start: victim.start})
		s.mu.Unlock()
		next, err := s.sp.serve(victim.name, victim.start+1)
		if err != nil {
			s.t.Errorf("restart of %s after the kill: %v", victim.name, err)
			return
		}
		s.mu.Lock()
		s.servers[1] = next
		s.mu.Unlock()
	}
}

func (s *soaker) server(i int) *server {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.servers[i]
}

func (s *soaker) killed(phase string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, k := range s.kills {
		if k.phase == phase {
			n++
		}
	}
	return n
}

// watchLocks reads every lane's lock four times a second: from the moment
// its holder's lock is seen until the holder is merged, the lock must stay
// the holder's, and no PR the lock blocked may ever hold it.
func (s *soaker) watchLocks(ctx context.Context, ls []*lane) {
	tk := time.NewTicker(250 * time.Millisecond)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
		}
		for _, l := range ls {
			lock, err := s.st.Lock(ctx, "acme/infra", l.layer)
			holder := 0
			switch {
			case err == nil:
				holder = lock.PR
			case !errors.Is(err, store.ErrNotFound):
				continue // the database was busy: no finding
			}
			l.mu.Lock()
			at := time.Since(s.begin).Round(time.Second)
			switch {
			case l.blocked[holder]:
				s.lose(fmt.Sprintf("%s: %s held by #%d, which its lock blocked", at, l.layer, holder))
			case l.holder == 0 || l.closed:
			case holder == l.holder:
				l.lockSeen = true
			case l.lockSeen:
				s.lose(fmt.Sprintf("%s: %s held by #%d (0: none) while #%d, open, held it", at, l.layer, holder, l.holder))
			}
			l.mu.Unlock()
		}
	}
}

func (s *soaker) lose(finding string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lost = append(s.lost, finding)
}

// waitUntil polls cond until it holds (true) or timeout passes (false),
// so that verify still says what is missing.
func waitUntil(timeout time.Duration, cond func() bool) bool {
	tk := time.NewTicker(100 * time.Millisecond)
	defer tk.Stop()
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); <-tk.C {
		if cond() {
			return true
		}
	}
	return false
}
