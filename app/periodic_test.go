package app

import (
	"fmt"
	"testing"
	"time"

	"strata.dev/strata/config"
	"strata.dev/strata/jobs"
	"strata.dev/strata/worker"
)

// Every scan the server schedules, as it was before the scans shared
// worker.Periodic: the queue's leader enqueues each job this often, at
// start too when AtStart; repin_interval sets the repin's.
func TestPeriodicScans(t *testing.T) {
	for name, tc := range map[string]struct {
		repin time.Duration
		want  []worker.Periodic
	}{
		"defaults": {0, []worker.Periodic{
			{ID: "layer_lock_repair", Every: time.Hour, AtStart: true, Args: jobs.LockRepair{}},
			{ID: "drift_scan", Every: time.Minute, AtStart: true, Args: jobs.DriftScan{}},
			{ID: "drift_discover", Every: 6 * time.Hour, AtStart: true, Args: jobs.DriftDiscover{}},
			{ID: "sync_repin", Every: 5 * time.Minute, Args: jobs.SyncRepin{}},
			{ID: "prune", Every: time.Hour, AtStart: true, Args: jobs.Prune{}},
		}},
		"repin_interval: 30s": {30 * time.Second, []worker.Periodic{
			{ID: "layer_lock_repair", Every: time.Hour, AtStart: true, Args: jobs.LockRepair{}},
			{ID: "drift_scan", Every: time.Minute, AtStart: true, Args: jobs.DriftScan{}},
			{ID: "drift_discover", Every: 6 * time.Hour, AtStart: true, Args: jobs.DriftDiscover{}},
			{ID: "sync_repin", Every: 30 * time.Second, Args: jobs.SyncRepin{}},
			{ID: "prune", Every: time.Hour, AtStart: true, Args: jobs.Prune{}},
		}},
	} {
		t.Run(name, func(t *testing.T) {
			rt, err := capabilities(&worker.Deps{Config: &config.Server{RepinInterval: tc.repin}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := rt.Periodic()
			if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tc.want) {
				t.Errorf("scans:\n%#v\nwant\n%#v", got, tc.want)
			}
			if n := len(rt.PeriodicJobs()); n != len(tc.want) {
				t.Errorf("%d River periodic jobs, want %d", n, len(tc.want))
			}
		})
	}
}
