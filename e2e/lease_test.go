package e2e

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"strata.dev/strata/apptest"
	"strata.dev/strata/sandbox"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

// Two replicas on one PostgreSQL; replica A loses its database while
// Terraform plans a layer -> A cannot renew the run's lease and stops the
// plan (Terraform interrupted, then killed) before the lease expires; only
// then does replica B declare the run lost and plan the layer again. The
// two plans of the layer never overlap, A reports nothing, and B's plan
// completes the PR's one check and comment.
//
// The lease is on the database's clock, which no test can stop, so it is
// long enough for a busy machine: renewed every second, cancelled after 3 s
// without one, killed 1.5 s later, lost after 6 s. With 100 ms beats a live
// plan was cancelled whenever its renewals stalled 300 ms, and the kill had
// 150 ms before the other replica claimed the run.
func TestLayersPlanStopsWhenItsReplicaLosesTheDatabase(t *testing.T) {
	requireTerraform(t)
	db := storetest.URL(t, store.Postgres)
	proxy, viaProxy := newDBProxy(t, db)
	a := startLayers(t, apptest.Options{DatabaseURL: viaProxy, Heartbeat: time.Second}, map[string]int{network: 1}, nil)
	a.Repo.SetPermission("alice", "write")
	pr := a.openPR("grow", "alice", map[string]string{network + "/main.tf": a.layerFile(network, 3000)})
	head := pr.HeadSHA()

	a.comment(pr.Number, "alice", "/plan")
	var pid int
	a.WaitFor(layersWait, func() bool { pid = terraformBelow(a.Config.DataDir, "plan"); return pid != 0 })
	exited := watchExit(t, pid)
	// B starts only now, so that the plan is A's.
	b := a.another(t, apptest.Options{DatabaseURL: db, GitHub: a.GitHub, Heartbeat: time.Second})

	proxy.Cut()
	cutAt := time.Now()
	var aExit time.Time
	select {
	case aExit = <-exited:
	case <-time.After(layersWait):
		t.Fatal("replica A's Terraform plan goes on without the database")
	}
	done := b.completed(head, networkPlan)
	proxy.Heal()

	st, err := store.Open(context.Background(), db, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	apptest.WaitIdle(t, st, layersWait)
	spans := slotSpans("layer", a.Env, b.Env)
	if len(spans) != 2 {
		t.Fatalf("%d plan runs took the layer's slot, want 2 (A's and B's retry): %v", len(spans), spans)
	}
	// A's log could not say when it let the slot go: its database was cut.
	// It held it until its Terraform exited.
	aEnd := max(spans[0][1], aExit.UnixMilli())
	t.Logf("after the cut, A's Terraform exited at +%d ms, B took the layer at +%d ms",
		aEnd-cutAt.UnixMilli(), spans[1][0]-cutAt.UnixMilli())
	if aEnd >= spans[1][0] {
		t.Fatalf("B's plan took the layer at %d while A's ran until %d: two plans of one layer at once", spans[1][0], aEnd)
	}
	if done.Conclusion != "success" || done.Title != "3000 to add, 0 to change, 0 to destroy" {
		t.Fatalf("plan check = %s %q %q", done.Conclusion, done.Title, done.Summary)
	}
	if n := len(b.checksNamed(head, networkPlan)); n != 1 {
		t.Errorf("%d plan checks, want the one B completed", n)
	}
	if n := b.planCount(pr.Number); n != 1 {
		t.Errorf("%d plan comments, want 1", n)
	}
	var statuses []string
	rows, err := st.DB().Query(`SELECT status FROM runs WHERE kind = 'layer_plan' ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		statuses = append(statuses, s)
	}
	if strings.Join(statuses, ",") != store.RunLost+","+store.RunSucceeded {
		t.Errorf("plan runs = %v, want A's lost and B's succeeded", statuses)
	}
	noViolations(t, a.GitHub)
}

// terraformBelow is the pid of a Terraform process of this test process
// running subcommand in a work dir under dataDir (one replica's), or 0.
func terraformBelow(dataDir, subcommand string) int {
	for _, pid := range sandbox.Descendants(os.Getpid()) {
		cwd, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "cwd"))
		if err != nil || !strings.HasPrefix(cwd, dataDir+string(filepath.Separator)) {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(cmdline), "\x00")
		if len(args) > 1 && filepath.Base(args[0]) == "terraform" && args[1] == subcommand {
			return pid
		}
	}
	return 0
}

// watchExit tells when the process pid exits, through a pidfd: the moment,
// not the next poll.
func watchExit(t *testing.T, pid int) <-chan time.Time {
	t.Helper()
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		t.Fatalf("pidfd of %d: %v", pid, err)
	}
	exited := make(chan time.Time, 1)
	go func() {
		defer unix.Close(fd)
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); !errors.Is(err, unix.EINTR) {
				break
			}
		}
		exited <- time.Now()
	}()
	return exited
}
