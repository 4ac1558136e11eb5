package store

// RecordDeliverySQL inserts a webhook delivery id, doing nothing when it was
// seen before; zero rows affected means a redelivery. The queue runs it in the
// transaction that enqueues the delivery's jobs, so both happen or neither.
const RecordDeliverySQL = `INSERT INTO deliveries (id, event, received_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING`

// Now is the timestamp format of the store (Unix milliseconds).
func Now() int64 { return now() }
