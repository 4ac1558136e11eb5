package handlers

import (
	"fmt"

	// encoding/json's behaviour, word for word, on the engine of json/v2
	// (what Go's own encoding/json runs on with GOEXPERIMENT=jsonv2): it
	// parses a 10 kB issue_comment payload in less than half the time, with one
	// allocation instead of 15 (BenchmarkDecodePayload). When Go's
	// encoding/json runs on that engine by default, this import goes back to
	// encoding/json.
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// PayloadError is a signed webhook whose payload does not parse as its
// event (a field of another type, a time in an unexpected format). Retrying
// cannot help, so the server answers it 400 with this reason, never 5xx.
type PayloadError struct {
	Event string
	Err   error
}

func (e *PayloadError) Error() string { return fmt.Sprintf("parse %s payload: %v", e.Event, e.Err) }

func (e *PayloadError) Unwrap() error { return e.Err }

// decode parses the payload of a delivery of event into v. Every delivery
// is parsed while GitHub waits for its answer, most of them (comments that
// are not commands, pushes to other branches) to be dropped: parsing was a
// sixth of the server's CPU at 1,000 comments a second (docs/benchmarks.md,
// Webhook intake).
func decode(event string, payload []byte, v any) error {
	if err := jsonv1.Unmarshal(payload, v); err != nil {
		return &PayloadError{Event: event, Err: err}
	}
	return nil
}
