package layers

import (
	"slices"
	"testing"
	"time"

	"strata.dev/strata/config"
	"strata.dev/strata/engine/terraform"
	"strata.dev/strata/store"
)

// Which layers ask for drift detection: the repo's schedule, unless the
// layer sets its own or turns it off.
func TestDriftWanted(t *testing.T) {
	cfg, err := config.ParseRepo(config.RepoFile, []byte(`version: 1
drift: {schedule: "every 6h"}
layers:
  - dir: infra/network
  - dir: infra/dns
    drift: {schedule: "0 3 * * *"}
  - dir: infra/app
    drift: {enabled: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	got := driftWanted(cfg)
	want := []store.DriftWanted{{Layer: "infra/network", Schedule: "every 6h"}, {Layer: "infra/dns", Schedule: "0 3 * * *"}}
	if !slices.Equal(got, want) {
		t.Errorf("driftWanted = %+v, want %+v", got, want)
	}
	if got := driftWanted(nil); got != nil {
		t.Errorf("without a file: %+v", got)
	}
}

// A due layer runs unless a PR holds its lock; it is next due at its
// schedule's next time after now.
func TestDriftStepOf(t *testing.T) {
	now := time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		schedule string
		lock     *store.Lock
		want     driftStep
		next     time.Time
	}{
		{name: "every 6h", schedule: "every 6h", want: driftEnqueue, next: now.Add(6 * time.Hour)},
		{name: "cron at 03:00", schedule: "0 3 * * *", want: driftEnqueue, next: time.Date(2026, 3, 2, 3, 0, 0, 0, time.UTC)},
		{name: "locked by #4: stays due", schedule: "every 6h", lock: &store.Lock{PR: 4}, want: driftSkipLocked},
		{name: "unreadable schedule", schedule: "whenever", want: driftForget},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step, next := driftStepOf(&store.DriftLayer{Layer: "network", Schedule: tc.schedule}, tc.lock, now)
			if step != tc.want || !next.Equal(tc.next) {
				t.Errorf("driftStepOf = %s %s, want %s %s", step, next, tc.want, tc.next)
			}
		})
	}
}

// What a run found, and what it does with the layer's issue.
func TestDriftIssueSteps(t *testing.T) {
	changes := &terraform.PlanResult{HasChanges: true, Change: 1}
	for _, tc := range []struct {
		name    string
		outcome planOutcome
		res     *terraform.PlanResult
		issue   int
		open    bool
		state   string
		step    issueStep
	}{
		{name: "first drift opens an issue", outcome: planPlanned, res: changes, state: store.DriftDrifted, step: issueOpen},
		{name: "drift again updates the open issue", outcome: planPlanned, res: changes, issue: 7, open: true, state: store.DriftDrifted, step: issueUpdate},
		{name: "drift after a person closed the issue opens a new one", outcome: planPlanned, res: changes, issue: 7, state: store.DriftDrifted, step: issueOpen},
		{name: "clean closes the open issue", outcome: planPlanned, res: &terraform.PlanResult{}, issue: 7, open: true, state: store.DriftClean, step: issueClose},
		{name: "clean after a person closed it forgets it", outcome: planPlanned, res: &terraform.PlanResult{}, issue: 7, state: store.DriftClean, step: issueForget},
		{name: "clean without an issue", outcome: planPlanned, res: &terraform.PlanResult{}, state: store.DriftClean, step: issueNone},
		{name: "Terraform failed: the issue stays", outcome: planToolFailed, issue: 7, open: true, state: store.DriftFailed, step: issueNone},
		{name: "Strata failed on the last attempt", outcome: planInfraFailed, state: store.DriftFailed, step: issueNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := driftStateOf(tc.outcome, tc.res)
			if state != tc.state {
				t.Fatalf("driftStateOf = %q, want %q", state, tc.state)
			}
			if step := issueStepOf(state, tc.issue, tc.open); step != tc.step {
				t.Errorf("issueStepOf = %s, want %s", step, tc.step)
			}
		})
	}
}

// A drift run plans the layer only when the default branch still asks for
// it, no PR holds its lock, and the file at the head parses and still
// asks; the first fact that says otherwise decides.
func TestDriftStartOf(t *testing.T) {
	lock := &store.Lock{PR: 4}
	bad := config.RepoErrors{}
	net := config.Layer{Name: "infra/network"}
	for _, tc := range []struct {
		name string
		f    driftFound
		want driftStart
	}{
		{"no schedule stored", driftFound{Stopped: true}, driftStopped},
		{"locked by a PR", driftFound{Issue: 9, Lock: lock}, driftLocked},
		{"the file does not parse", driftFound{SHA: "abc", Branch: "main", ConfigErr: bad}, driftBadConfig},
		{"the file no longer asks", driftFound{SHA: "abc", Branch: "main"}, driftGone},
		{"asks", driftFound{SHA: "abc", Branch: "main", Layer: net, Asks: true}, driftPlan},
		{"asks, with its issue open", driftFound{Issue: 9, SHA: "abc", Branch: "main", Layer: net, Asks: true}, driftPlan},
	} {
		if got := driftStartOf(tc.f); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}
