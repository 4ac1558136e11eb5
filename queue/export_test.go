package queue

import (
	"context"

	"github.com/riverqueue/river"
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
		batch = append(batch, newDelivery(t.ID, event, t.Jobs))
	}
	var taken []bool
	for _, r := range q.intake.commitBatch(ctx, batch) {
		taken = append(taken, r.ok && r.err == nil)
	}
	return taken
}
