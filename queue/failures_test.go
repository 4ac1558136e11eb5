package queue_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"
	"github.com/rs/zerolog"

	"strata.dev/strata/queue"
	"strata.dev/strata/store"
	"strata.dev/strata/store/storetest"
)

type failArgs struct {
	Repo     string `json:"repo"`
	PR       int    `json:"pr"`
	Attempts int    `json:"attempts"`
}

func (failArgs) Kind() string { return "always_fails" }

func (a failArgs) InsertOpts() river.InsertOpts { return river.InsertOpts{MaxAttempts: a.Attempts} }

type failWorker struct{ river.WorkerDefaults[failArgs] }

func (failWorker) Work(context.Context, *river.Job[failArgs]) error {
	return errors.New("terraform init: provider registry unreachable")
}

// NextRetry is far off: the test sees the first failure, not the retry.
func (failWorker) NextRetry(*river.Job[failArgs]) time.Time { return time.Now().Add(time.Hour) }

// syncBuffer is a log sink the queue's goroutines write to while the test reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// lines are the log's JSON lines whose message contains msg.
func (b *syncBuffer) lines(msg string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(b.buf.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && strings.Contains(m["message"].(string), msg) {
			out = append(out, m)
		}
	}
	return out
}

// A job that fails its last attempt is discarded by River with the error
// only in its row: Strata logs it with its kind, repo, PR and error, and
// counts it; a failure that will be retried is logged as such.
func TestFailedAndDiscardedJobsAreLoggedAndCounted(t *testing.T) {
	st := storetest.Open(t, store.SQLite)
	workers := river.NewWorkers()
	river.AddWorker(workers, failWorker{})
	var log syncBuffer
	var mu sync.Mutex
	observed := map[rivertype.JobState]int{}
	q, err := queue.New(st, workers, queue.Options{
		Workers: 2, Log: zerolog.New(&log),
		Observe: func(kind string, s rivertype.JobState) {
			mu.Lock()
			defer mu.Unlock()
			if kind == "always_fails" {
				observed[s]++
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := q.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		q.Stop(sctx)
	})
	if _, err := q.Enqueue(ctx, failArgs{Repo: "acme/infra", PR: 42, Attempts: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Enqueue(ctx, failArgs{Repo: "acme/apps", PR: 7, Attempts: 3}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "a discarded and a retryable failure logged", func() bool {
		return len(log.lines("discarded")) == 1 && len(log.lines("will be retried")) == 1
	})
	for msg, want := range map[string]map[string]any{
		"discarded":       {"level": "error", "kind": "always_fails", "repo": "acme/infra", "pr": 42.0, "attempt": 1.0},
		"will be retried": {"level": "warn", "kind": "always_fails", "repo": "acme/apps", "pr": 7.0, "attempt": 1.0, "max_attempts": 3.0},
	} {
		got := log.lines(msg)[0]
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%q line: %s = %v, want %v (%v)", msg, k, got[k], v, got)
			}
		}
		if e, _ := got["error"].(string); !strings.Contains(e, "provider registry unreachable") {
			t.Errorf("%q line does not say why: %v", msg, got)
		}
	}
	waitFor(t, "both failures observed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return observed[rivertype.JobStateDiscarded] == 1 && observed[rivertype.JobStateRetryable] == 1
	})
}
