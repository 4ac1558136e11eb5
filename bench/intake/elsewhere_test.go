package intake

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// githubEnv set to "idle" runs the fake GitHub, this process, as if it were
// elsewhere, as GitHub is: for the load, its threads get Linux's SCHED_IDLE
// policy, so they run only on a core that Strata, PostgreSQL and the
// generator leave idle. The fake still answers every call of the workers,
// later when the cores are busy, as a distant GitHub would.
const githubEnv = "INTAKE_BENCH_GITHUB"

// githubElsewhere says whether githubEnv asks for the fake elsewhere.
func githubElsewhere(b *testing.B) bool {
	switch v := os.Getenv(githubEnv); v {
	case "":
		return false
	case "idle":
		return true
	default:
		b.Fatalf("%s=%q: the only value is idle", githubEnv, v)
		return false
	}
}

// idle gives every thread of this process SCHED_IDLE, and returns what
// puts them back: the next benchmark's `strata serve` would otherwise
// inherit the policy. Putting them back takes CAP_SYS_NICE or an
// RLIMIT_NICE of 20. When it fails part way, the threads it did set are
// put back before it returns.
func idle() (restore func() error, err error) {
	restore = func() error {
		if err := setPolicy(unix.SCHED_NORMAL); err != nil {
			return fmt.Errorf("back to SCHED_NORMAL: %w", err)
		}
		return nil
	}
	if err := setPolicy(unix.SCHED_IDLE); err != nil {
		return nil, errors.Join(fmt.Errorf("SCHED_IDLE: %w", err), restore())
	}
	return restore, nil
}

// setPolicy sets the scheduling policy of each of this process's threads.
// A thread the runtime starts meanwhile takes its creator's policy, so the
// threads are read again until a pass finds none it has not set.
func setPolicy(policy uint32) error {
	done := map[int]bool{}
	for {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		changed := false
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil || done[tid] {
				continue
			}
			attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: policy}
			if err := unix.SchedSetAttr(tid, &attr, 0); err != nil && !errors.Is(err, unix.ESRCH) {
				return err
			}
			done[tid], changed = true, true
		}
		if !changed {
			return nil
		}
	}
}
