package app

import (
	"net/http"
	"time"
)

// newHTTPServer bounds how long a client may hold a connection, so that
// slow or stalled clients cannot pile up connections and goroutines:
//   - headers within 10s (a slowloris sends them a byte at a time);
//   - the whole request within 60s: only webhooks have a body, at most
//     25 MB, which even 4 Mbit/s delivers in time; GitHub itself gives up
//     on a delivery after 10s;
//   - the answer within 2 minutes of the headers: webhooks are answered in
//     milliseconds, and /runs writes a stored log at once, which is a few
//     MB at most;
//   - an idle keep-alive connection is closed after 2 minutes.
//
// A handler that streams for longer (a live log, server-sent events) must
// lift both deadlines for its own request with http.ResponseController
// (SetReadDeadline and SetWriteDeadline): past ReadTimeout net/http's
// background read on the connection fails and cancels the request's
// context, and past WriteTimeout its writes fail.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
	}
}
