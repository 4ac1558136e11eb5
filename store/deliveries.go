package store

import "strings"

// Delivery is a webhook delivery to record: its id (X-GitHub-Delivery),
// its event, and when it came (Now).
type Delivery struct {
	ID, Event  string
	ReceivedAt int64
}

// RecordDeliveries inserts the webhook deliveries ds in one statement,
// skipping an id seen before (or twice in ds): fewer rows affected than
// deliveries means a redelivery among them. The queue runs it in the
// transaction that enqueues the deliveries' jobs, so both happen or
// neither. Deliveries that arrive together are recorded with one round
// trip, not one each: under load a batch holds up to 64, and a round trip
// each kept the batch's transaction open, and the next batch waiting, for
// as many.
func RecordDeliveries(ds []Delivery) Statement {
	var sql strings.Builder
	sql.WriteString(`INSERT INTO deliveries (id, event, received_at) VALUES `)
	args := make([]any, 0, 3*len(ds))
	for i, d := range ds {
		if i > 0 {
			sql.WriteString(", ")
		}
		sql.WriteString("(?, ?, ?)")
		args = append(args, d.ID, d.Event, d.ReceivedAt)
	}
	sql.WriteString(` ON CONFLICT (id) DO NOTHING`)
	return Statement{SQL: sql.String(), Args: args}
}

// Now is the timestamp format of the store (Unix milliseconds).
func Now() int64 { return now() }
