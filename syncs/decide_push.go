package syncs

import (
	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
)

// syncPush is what a push to the default branch found about one sync, up
// to the first fact that decides it (syncPushFacts), in the order it looks.
type syncPush struct {
	Overlap  string               // why the destination overlaps the source (feedsItself); "" when it does not
	Takeover *store.Takeover      // the sync is taken over by a PR
	Last     *store.SyncHydration // the sync's last hydration; nil: none
	// Changed are the files the push changed; Known: they could be told.
	Changed []string
	Known   bool
}

// pushStep is what a push does for one sync.
type pushStep int

const (
	pushHydrate  pushStep = iota // enqueue a hydration of the pushed commit
	pushOverlaps                 // fail the sync's check once: it would feed itself
	pushPaused                   // show the sync paused by its takeover on the pushed commit
	pushUpToDate                 // nothing it reads changed: the record moves to the pushed commit
)

// pushStepOf decides what a push does for one sync.
func pushStepOf(spec jobs.SyncSpec, p syncPush) pushStep {
	switch {
	case p.Overlap != "":
		return pushOverlaps
	case p.Takeover != nil:
		return pushPaused
	case upToDate(p.Last, spec, p.Changed, p.Known):
		return pushUpToDate
	}
	return pushHydrate
}
