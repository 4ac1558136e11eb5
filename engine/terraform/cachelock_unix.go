//go:build unix

package terraform

import (
	"context"
	"errors"
	"os"
	"syscall"
)

// lockFile takes an exclusive flock(2) on path, creating the file if needed,
// and returns the function that releases it. flock locks belong to an open
// file description, so two goroutines of one process exclude each other just
// like two processes (or two Strata replicas sharing a host's data dir) do;
// the kernel drops the lock if the process dies, so a crash never leaves the
// cache locked.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	locked := make(chan error, 1)
	go func() {
		for {
			err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
			if !errors.Is(err, syscall.EINTR) {
				locked <- err
				return
			}
		}
	}()
	release := func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		_ = f.Close()
	}
	select {
	case err := <-locked:
		if err != nil {
			_ = f.Close()
			return nil, err
		}
		return release, nil
	case <-ctx.Done():
		// The blocked flock cannot be interrupted: release the lock once it is
		// granted, in the background.
		go func() {
			if err := <-locked; err == nil {
				release()
			} else {
				_ = f.Close()
			}
		}()
		return nil, ctx.Err()
	}
}
