package worker

import "github.com/riverqueue/river"

// registerSyncs adds the workers, commands and event reactions of
// Manifest hydration: pushes, previews, /takeover and /release (issue 4).
func registerSyncs(w *river.Workers, d *Deps) {}
