package queue

import (
	"context"

	"github.com/riverqueue/river"

	"strata.dev/strata/store"
)

// Together is one delivery of DeliverTogether.
type Together struct {
	ID   string
	Jobs []river.JobArgs
}

// DeliverTogether commits ds as one batch of intake, as deliveries that
// arrive while another commits are: whether each was taken, in order.
func DeliverTogether(ctx context.Context, q *Queue, event string, ds ...Together) []bool {
	var batch []*delivery
	for _, t := range ds {
		d := &delivery{record: store.Delivery{ID: t.ID, Event: event, ReceivedAt: store.Now()}}
		for _, j := range t.Jobs {
			d.jobs = append(d.jobs, river.InsertManyParams{Args: j})
		}
		batch = append(batch, d)
	}
	var taken []bool
	for _, r := range q.intake.commitBatch(ctx, batch) {
		taken = append(taken, r.ok && r.err == nil)
	}
	return taken
}
