package syncs

import (
	"testing"

	"strata.dev/strata/jobs"
	"strata.dev/strata/store"
)

// A push to the default branch, for each sync: refused when it would feed
// itself, shown paused while taken over, recorded when nothing it reads
// changed, else hydrated; in that order.
func TestPushStepOf(t *testing.T) {
	spec := syncSpec(jobs.NewRepo(1, "acme", "infra"), dev)
	last := &store.SyncHydration{Spec: specJSON(spec), Inputs: []string{"deploy/base/"}}
	failed := &store.SyncHydration{Spec: specJSON(spec), Inputs: []string{"deploy/base/"}, FailedCommit: "abc"}
	taken := &store.Takeover{PR: 7}
	docs, base := []string{"docs/README.md"}, []string{"deploy/base/deployment.yaml"}
	for _, tc := range []struct {
		name string
		push syncPush
		want pushStep
	}{
		{"overlaps", syncPush{Overlap: "Nothing was hydrated: …", Takeover: taken, Last: last, Changed: docs, Known: true}, pushOverlaps},
		{"taken over", syncPush{Takeover: taken, Last: last, Changed: docs, Known: true}, pushPaused},
		{"taken over, an input changed", syncPush{Takeover: taken, Changed: base, Known: true}, pushPaused},
		{"no input changed", syncPush{Last: last, Changed: docs, Known: true}, pushUpToDate},
		{"an input changed", syncPush{Last: last, Changed: base, Known: true}, pushHydrate},
		{"the push's files unknown", syncPush{Last: last}, pushHydrate},
		{"never hydrated", syncPush{Changed: docs, Known: true}, pushHydrate},
		{"the last build failed", syncPush{Last: failed, Changed: docs, Known: true}, pushHydrate},
	} {
		if got := pushStepOf(spec, tc.push); got != tc.want {
			t.Errorf("%s: %d; want %d", tc.name, got, tc.want)
		}
	}
}
