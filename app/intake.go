package app

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/palantir/go-githubapp/githubapp"

	"strata.dev/strata/handlers"
)

// maxWebhookBytes is GitHub's cap on a webhook payload: GitHub never sends
// more, so a larger body is not from GitHub.
const maxWebhookBytes = 25 << 20

// hook takes GitHub's webhooks. Before anything reads the body it is capped
// at GitHub's limit; go-githubapp's dispatcher then reads it and checks the
// signature (github.ValidatePayload) before any handler decodes it.
func (s *Server) hook(w http.ResponseWriter, r *http.Request) {
	defer func(start time.Time) { s.metrics.intake.Observe(time.Since(start).Seconds()) }(time.Now())
	h := s.webhook.Load()
	if h == nil {
		http.Error(w, "Strata is not ready to take webhooks", http.StatusServiceUnavailable)
		return
	}
	if r.ContentLength > maxWebhookBytes {
		s.webhookError(w, r, &http.MaxBytesError{Limit: maxWebhookBytes})
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxWebhookBytes)
	if !signed(r) {
		// An unsigned body is refused whatever it holds, so it is counted
		// away rather than buffered: it costs reading, never memory.
		_, err := io.Copy(io.Discard, r.Body)
		if err == nil {
			err = errors.New("missing signature (X-Hub-Signature-256)")
		}
		s.webhookError(w, r, githubapp.ValidationError{
			EventType: r.Header.Get("X-GitHub-Event"), DeliveryID: r.Header.Get("X-GitHub-Delivery"), Cause: err,
		})
		return
	}
	(*h).ServeHTTP(w, r)
}

func signed(r *http.Request) bool {
	return r.Header.Get("X-Hub-Signature-256") != "" || r.Header.Get("X-Hub-Signature") != ""
}

// webhookError answers a webhook that was not taken. What the sender got
// wrong (too large, unsigned, bad signature, a payload that does not parse
// as its event) is a 4xx with the reason, so GitHub's delivery log says
// what happened; only Strata's own failures are 5xx.
func (s *Server) webhookError(w http.ResponseWriter, r *http.Request, err error) {
	event := r.Header.Get("X-GitHub-Event")
	var ve githubapp.ValidationError
	var pe *handlers.PayloadError
	var tooLarge *http.MaxBytesError
	cause := err
	if errors.As(err, &ve) {
		cause = ve.Cause // ValidationError does not unwrap
	}
	switch {
	case errors.As(cause, &tooLarge):
		s.metrics.webhooks.WithLabelValues(event, "too_large").Inc()
		s.log.Warn().Str("event", event).Msg("refused a webhook larger than GitHub's cap")
		http.Error(w, fmt.Sprintf("The webhook body is larger than GitHub's cap of %d MB.", maxWebhookBytes>>20), http.StatusRequestEntityTooLarge)
	case errors.As(err, &ve):
		s.metrics.webhooks.WithLabelValues(event, "invalid").Inc()
		s.log.Warn().Err(ve.Cause).Str("event", event).Msg("refused a webhook with invalid headers or signature")
		http.Error(w, "Invalid webhook: "+ve.Cause.Error(), http.StatusBadRequest)
	case errors.As(err, &pe):
		s.metrics.webhooks.WithLabelValues(event, "invalid").Inc()
		s.log.Warn().Err(err).Str("event", event).Msg("refused a signed webhook whose payload does not parse")
		http.Error(w, "Strata cannot parse this webhook: "+pe.Error(), http.StatusBadRequest)
	default:
		s.metrics.webhooks.WithLabelValues(event, "error").Inc()
		s.log.Error().Err(err).Str("event", event).Msg("webhook not taken")
		githubapp.DefaultErrorCallback(w, r, err)
	}
}

func (s *Server) webhookResponse(w http.ResponseWriter, r *http.Request, event string, handled bool) {
	outcome := "ignored"
	if handled {
		outcome = "accepted"
	}
	s.metrics.webhooks.WithLabelValues(event, outcome).Inc()
	githubapp.DefaultResponseCallback(w, r, event, handled)
}
