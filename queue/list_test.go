package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"strata.dev/strata/queue"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

type brokenArgs struct {
	Repo   string `json:"repo"`
	PR     int    `json:"pr"`
	Target string `json:"target"`
	User   string `json:"user"`
	Check  int64  `json:"check_run_id"`
}

func (brokenArgs) Kind() string { return "broken" }

type brokenWorker struct {
	river.WorkerDefaults[brokenArgs]
}

func (brokenWorker) Work(_ context.Context, job *river.Job[brokenArgs]) error {
	return errors.New("broke on " + job.Args.Target)
}

type ownArgs struct{}

func (ownArgs) Kind() string { return "own" }

type ownWorker struct{ river.WorkerDefaults[ownArgs] }

func (ownWorker) Work(context.Context, *river.Job[ownArgs]) error { return nil }

// acme/infra has a job waiting, an interrupted run's report and a job that
// failed for good; acme/other has the same; Strata has a job of its own.
// The list for a viewer of acme/infra shows acme/infra's and Strata's
// jobs, with the failure's error, and its users.
func TestJobsListsTheViewersRepositories(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d store.Dialect) {
		ctx := context.Background()
		st := storetest.Open(t, d)
		workers := river.NewWorkers()
		river.AddWorker(workers, &brokenWorker{})
		river.AddWorker(workers, &ownWorker{})
		river.AddWorker(workers, &echoWorker{})
		river.AddWorker(workers, &interruptedWorker{got: make(chan queue.Interrupted, 4)})
		q, err := queue.New(st, workers, queue.Options{Workers: 2, Heartbeat: 50 * time.Millisecond, StaleAfter: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := q.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		f := &fixture{st: st, q: q}
		later := &river.InsertOpts{ScheduledAt: time.Now().Add(time.Hour)}
		enqueue := func(args river.JobArgs, opts *river.InsertOpts) int64 {
			t.Helper()
			id, err := q.Enqueue(ctx, args, opts)
			if err != nil {
				t.Fatal(err)
			}
			return id
		}
		waiting := enqueue(echoArgs{Repo: "acme/infra", N: 1}, later)
		enqueue(echoArgs{Repo: "acme/other", N: 2}, later)
		own := enqueue(ownArgs{}, later)
		inner, _ := json.Marshal(brokenArgs{Repo: "acme/infra", PR: 4, Target: "net"})
		report := enqueue(queue.Interrupted{JobKind: "layer_apply", Args: inner}, later)
		failed := enqueue(brokenArgs{Repo: "acme/infra", PR: 3, Target: "net", User: "alice", Check: 12}, &river.InsertOpts{MaxAttempts: 1})
		otherFailed := enqueue(brokenArgs{Repo: "acme/other", PR: 5, Target: "x"}, &river.InsertOpts{MaxAttempts: 1})
		f.start(t)
		var jobs []queue.JobInfo
		waitFor(t, "the failed job listed", func() bool {
			jobs, err = q.Jobs(ctx, queue.JobFilter{Repos: []string{"ACME/Infra"}, FailedSince: time.Now().Add(-time.Hour)})
			return err == nil && len(jobs) > 0 && jobs[len(jobs)-1].ID == failed
		})
		byID := map[int64]queue.JobInfo{}
		for _, j := range jobs {
			byID[j.ID] = j
		}
		if len(jobs) != 4 || byID[waiting].State != rivertype.JobStateScheduled || byID[own].Kind != "own" || byID[own].Repo != "" {
			t.Fatalf("jobs = %+v, want acme/infra's waiting job, its report, its failure and Strata's own", jobs)
		}
		if r := byID[report]; r.Repo != "acme/infra" || r.PR != 4 || r.Target != "net" || r.Kind != "interrupted" {
			t.Errorf("interrupted report = %+v, want it on acme/infra#4 net", r)
		}
		if j := byID[failed]; j.State != rivertype.JobStateDiscarded || j.Error != "broke on net" || j.PR != 3 || j.User != "alice" ||
			j.Attempt != 1 || j.MaxAttempts != 1 || j.At.IsZero() {
			t.Errorf("failed job = %+v", j)
		}
		if recent, _ := q.Jobs(ctx, queue.JobFilter{Repos: []string{"acme/infra"}, FailedSince: time.Now().Add(time.Minute)}); len(recent) != 3 {
			t.Errorf("jobs failed since a minute from now = %+v, want none of the failures", recent)
		}

		origins, err := q.JobOrigins(ctx, []int64{failed, otherFailed, waiting})
		if err != nil || len(origins) != 3 || origins[failed] != (queue.JobOrigin{User: "alice", CheckRunID: 12}) || origins[waiting] != (queue.JobOrigin{}) {
			t.Errorf("JobOrigins = %v, %v; want alice and check 12 for job %d", origins, err, failed)
		}
	})
}
