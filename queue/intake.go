package queue

import (
	"context"
	"sync"
	"time"

	"github.com/riverqueue/river"

	"strata.dev/strata/store"
)

// intake commits deliveries that arrive together in one transaction (a
// group commit). Under load most of a delivery's time on SQLite's single
// connection is River parsing its insert statement: one statement for a
// batch of jobs costs about what one costs for one job. No delivery waits
// for company: the first one commits at once, alone; those that come while
// it commits go together in the next transaction, led by the first of them.
type intake struct {
	commit func(ctx context.Context, g gate, jobs []river.InsertManyParams) (bool, error)

	mu      sync.Mutex
	busy    bool        // a leader is committing
	pending []*delivery // waiting for the next transaction
}

type delivery struct {
	record store.Delivery // its record: the gate against a redelivery
	jobs   []river.InsertManyParams
	done   chan delivered // buffered: the leader never waits on it
}

// newDelivery is a delivery received now, to be recorded with its jobs.
func newDelivery(id, event string, jobs []river.JobArgs) *delivery {
	d := &delivery{record: store.Delivery{ID: id, Event: event, ReceivedAt: store.Now()}, done: make(chan delivered, 1)}
	for _, j := range jobs {
		d.jobs = append(d.jobs, river.InsertManyParams{Args: j})
	}
	return d
}

type delivered struct {
	ok   bool
	err  error
	lead bool // commit the pending deliveries, this one among them
}

// maxBatch bounds a transaction: a bigger one holds the connection longer
// for the jobs' workers.
const maxBatch = 64

// commitTimeout is how long a batch may take to commit: GitHub gives up on
// a delivery after 10 s.
const commitTimeout = 10 * time.Second

func (in *intake) deliver(ctx context.Context, d *delivery) (bool, error) {
	in.mu.Lock()
	in.pending = append(in.pending, d)
	if in.busy {
		in.mu.Unlock()
		r := <-d.done
		if !r.lead {
			return r.ok, r.err
		}
		in.mu.Lock()
	}
	in.busy = true
	n := min(len(in.pending), maxBatch)
	batch := in.pending[:n:n]
	in.pending = in.pending[n:]
	in.mu.Unlock()

	// The batch is committed for every delivery in it: the leader's
	// request going away does not cancel the others'. A database that
	// does not answer fails them all (GitHub redelivers on an error).
	// GitHub waits for the answer: on SQLite the batch goes before the
	// workers' statements (store.Urgent).
	cctx, cancel := context.WithTimeout(store.Urgent(context.WithoutCancel(ctx)), commitTimeout)
	results := in.commitBatch(cctx, batch)
	cancel()
	var own delivered
	for i, b := range batch {
		if b == d {
			own = results[i]
		} else {
			b.done <- results[i]
		}
	}

	in.mu.Lock()
	if len(in.pending) > 0 {
		in.pending[0].done <- delivered{lead: true}
	} else {
		in.busy = false
	}
	in.mu.Unlock()
	return own.ok, own.err
}

// commitBatch commits the batch in one transaction when every delivery in
// it is new and every job can be inserted: the common case. The records
// are one statement and the jobs one River insert, so a batch costs two
// round trips whatever its size. Otherwise (a redelivery among them, a job
// River refuses) each is committed alone, so that one delivery's fate is
// its own.
func (in *intake) commitBatch(ctx context.Context, batch []*delivery) []delivered {
	results := make([]delivered, len(batch))
	if len(batch) > 1 {
		var records []store.Delivery
		var jobs []river.InsertManyParams
		for _, d := range batch {
			records = append(records, d.record)
			jobs = append(jobs, d.jobs...)
		}
		if ok, err := in.commit(ctx, recording(records), jobs); ok && err == nil {
			for i := range results {
				results[i].ok = true
			}
			return results
		}
	}
	for i, d := range batch {
		results[i].ok, results[i].err = in.commit(ctx, recording([]store.Delivery{d.record}), d.jobs)
	}
	return results
}

// recording is the gate that records deliveries: one statement, which must
// add a row for each of them (its rows follow from the records, so the two
// cannot disagree); otherwise the gate closes and nothing is written.
func recording(records []store.Delivery) gate {
	return gate{stmts: []store.Statement{store.RecordDeliveries(records)}, rows: int64(len(records))}
}
