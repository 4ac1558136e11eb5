package syncs

import (
	"errors"
	"fmt"
	"testing"

	"strata.dev/strata/engine/hydrate"
	"strata.dev/strata/jobs"
)

// What a takeover's hydration puts on its check and returns to the queue
// for each way it ends: a build the PR's files broke ends the job with the
// reason on the check; any other failure is on the check and retried.
func TestTakeoverOutcomeOf(t *testing.T) {
	a := jobs.SyncTakeover{Target: "apps", HeadSHA: "abcdef0123"}
	broken := &hydrate.Error{Sync: "apps", Source: "apps/overlays/prod", Err: errors.New("no kustomization.yaml")}
	network := errors.New("GET tree: connection reset")
	conflict := fmt.Errorf("commit: %w", errors.New("ref moved 5 times"))
	for _, tc := range []struct {
		name     string
		run      takeoverRun
		note     string
		queueErr error
	}{
		{"the PR's files do not build", takeoverRun{BuildErr: fmt.Errorf("build: %w", broken)},
			"`apps` could not be hydrated at abcdef0; nothing was committed.\n\n```\nhydrate sync \"apps\" (apps/overlays/prod): no kustomization.yaml\n```\n", nil},
		{"the build failed otherwise", takeoverRun{BuildErr: network},
			"Hydrating abcdef0 failed: `GET tree: connection reset`. Push again or comment `/takeover apps` to retry.", network},
		{"the commit failed", takeoverRun{CommitErr: conflict},
			"Hydrating abcdef0 failed: `commit: ref moved 5 times`. Push again or comment `/takeover apps` to retry.", conflict},
		{"the takeover ended while committing", takeoverRun{Skipped: true}, "", nil},
		{"hydrated", takeoverRun{Summary: "Hydrated `apps` at abcdef0.\n\n"}, "Hydrated `apps` at abcdef0.\n\n", nil},
	} {
		out := takeoverOutcomeOf(a, tc.run)
		if out.Note != tc.note || out.Err != tc.queueErr {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, out.Note, out.Err, tc.note, tc.queueErr)
		}
	}
}
