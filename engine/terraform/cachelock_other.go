//go:build !unix

package terraform

import (
	"context"
	"sync"
)

var inProcessLocks sync.Map // path -> chan struct{}

// lockFile on systems without flock(2) serializes only within this process.
func lockFile(ctx context.Context, path string) (unlock func(), err error) {
	v, _ := inProcessLocks.LoadOrStore(path, make(chan struct{}, 1))
	ch := v.(chan struct{})
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
