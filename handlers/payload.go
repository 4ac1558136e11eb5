package handlers

import "fmt"

// PayloadError is a signed webhook whose payload does not parse as its
// event (a field of another type, a time in an unexpected format). Retrying
// cannot help, so the server answers it 400 with this reason, never 5xx.
type PayloadError struct {
	Event string
	Err   error
}

func (e *PayloadError) Error() string { return fmt.Sprintf("parse %s payload: %v", e.Event, e.Err) }

func (e *PayloadError) Unwrap() error { return e.Err }
