package queue

import (
	"context"
	"fmt"
	"testing"

	"github.com/riverqueue/river"

	"strata.dev/strata/store"
)

// A batch of deliveries is recorded by one statement, whatever its size:
// with a statement each, a batch of 64 took 64 round trips while it held
// its transaction, and the deliveries behind it waited for all of them.
func TestABatchIsRecordedInOneStatement(t *testing.T) {
	var gates []gate
	in := &intake{commit: func(_ context.Context, g gate, _ []river.InsertManyParams) (bool, error) {
		gates = append(gates, g)
		return true, nil
	}}
	var batch []*delivery
	for i := range 5 {
		batch = append(batch, &delivery{record: store.Delivery{ID: fmt.Sprint("d", i), Event: "issue_comment", ReceivedAt: 1}})
	}
	for i, r := range in.commitBatch(context.Background(), batch) {
		if !r.ok || r.err != nil {
			t.Errorf("delivery %d: ok=%v err=%v, want taken", i, r.ok, r.err)
		}
	}
	if len(gates) != 1 {
		t.Fatalf("%d transactions for a batch of 5, want 1", len(gates))
	}
	g := gates[0]
	if len(g.stmts) != 1 {
		t.Fatalf("the batch's gate ran %d statements, want one recording all 5", len(g.stmts))
	}
	if g.rows != 5 || len(g.stmts[0].Args) != 15 {
		t.Fatalf("the batch's statement has %d arguments and wants %d rows; want 15 (5 deliveries) and 5", len(g.stmts[0].Args), g.rows)
	}
}
