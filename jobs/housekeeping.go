package jobs

import (
	"time"

	"github.com/riverqueue/river"
)

// Prune deletes what is older than the server's retention (deliveries, run
// logs, plan reports) and prunes the source cache; a periodic job.
type Prune struct{}

func (Prune) Kind() string { return "prune" }

// InsertOpts: pruning again is harmless, so it may retry.
func (Prune) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: 3} }

// PruneTimeout bounds one pruning: a few deletes and a directory walk.
const PruneTimeout = 10 * time.Minute
